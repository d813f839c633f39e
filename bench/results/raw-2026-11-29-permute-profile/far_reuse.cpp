#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cmath>
int main(int argc,char**argv){
  const long n=1l<<26; std::vector<int32_t> p(n), inv(n);
  FILE*f=fopen("perm.bin","rb"); fread(p.data(),4,n,f); fclose(f);
  for(long i=0;i<n;++i) inv[p[i]]=i;
  long far=0; std::vector<long> ds;
  for(long o=0;o<n;++o){ long d=long(p[o])-o; if(std::labs(d)>(1<<20)){ far++; long s=p[o]; long nb = s+1<n? s+1 : s-1; ds.push_back(long(inv[nb]) - o);} }
  printf("far %ld %.4f\n",far,double(far)/n);
  for(long D: {0l, 2000000l, 2048l*1024, 2080000l, 2100000l}){
    std::vector<long> a; a.reserve(ds.size());
    for(long x: ds){ long y = x; if(D){ long m = ((x % D)+D)%D; y = std::min(m, D-m);} a.push_back(std::labs(y)); }
    std::sort(a.begin(),a.end());
    printf("D=%ld: delta quantiles 10%% %ld 25%% %ld 50%% %ld 75%% %ld 90%% %ld 99%% %ld\n",D,a[a.size()/10],a[a.size()/4],a[a.size()/2],a[a.size()*3/4],a[a.size()*9/10],a[a.size()*99/100]);
  }
}
