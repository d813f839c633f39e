#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>
#include <map>
#include <cmath>
struct hashf { unsigned salt; float operator()(unsigned i) const {
    unsigned x = i * 0x9E3779B9u ^ salt;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return float(x >> 8) * (2.0f / 16777216.0f) - 1.0f; } };
inline int cell1(float v) { int i = int((v + 2.0f) * 16.0f); return i < 0 ? 0 : i > 63 ? 63 : i; }
int main(int argc,char**argv){
  const long n = 1l<<26; int steps = argc>1?atoi(argv[1]):50;
  std::vector<std::vector<float>> q(6, std::vector<float>(n));
  for(int c=0;c<6;++c) for(long i=0;i<n;++i) q[c][i]=hashf{unsigned(c)*7919u+1}(unsigned(i))*(c>=3?0.1f:1.f);
  auto keyof=[&](std::vector<int>&k){ for(long i=0;i<n;++i) k[i]=(cell1(q[2][i])*64+cell1(q[1][i]))*64+cell1(q[0][i]); };
  std::vector<int> key(n); std::vector<int32_t> perm(n);
  keyof(key); std::iota(perm.begin(),perm.end(),0);
  std::stable_sort(perm.begin(),perm.end(),[&](int a,int b){return key[a]<key[b];});
  for(int c=0;c<6;++c){ std::vector<float> r(n); for(long i=0;i<n;++i) r[i]=q[c][perm[i]]; q[c].swap(r);}
  for(long i=0;i<n;++i){ float a=q[0][i],b=q[1][i],c=q[2][i],u=q[3][i],v=q[4][i],w=q[5][i];
    for(int s=0;s<steps;++s){u-=a*1e-3f,v-=b*1e-3f,w-=c*1e-3f;a+=u*1e-3f,b+=v*1e-3f,c+=w*1e-3f;}
    q[0][i]=a,q[1][i]=b,q[2][i]=c;}
  keyof(key); std::iota(perm.begin(),perm.end(),0);
  std::stable_sort(perm.begin(),perm.end(),[&](int a,int b){return key[a]<key[b];});
  FILE*f=fopen("perm.bin","wb"); fwrite(perm.data(),4,n,f); fclose(f);
  // histogram of d = idx[i]-i by log2 bucket, signed
  std::map<int,long> h;
  for(long i=0;i<n;++i){ long d=long(perm[i])-i; int b = d==0?0:(d>0?1:-1)*(1+int(std::log2(double(std::labs(d))))); h[b]++; }
  for(auto&[b,c]:h) printf("%+3d %10ld %.4f\n",b,c,double(c)/n);
}
