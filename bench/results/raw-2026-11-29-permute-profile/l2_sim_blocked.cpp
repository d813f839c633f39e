// LRU simulation of one column's source-sector reads, output tiles in a blocked order over inferred
// row (R) and plane (P) strides: o = z*P + y*R + w; tiles ordered by (z/bz, y/by, w-tile, z%bz, y%by).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <tuple>
int main(int argc,char**argv){
  const long n=1l<<26; std::vector<int32_t> p(n);
  FILE*f=fopen("perm.bin","rb"); fread(p.data(),4,n,f); fclose(f);
  const long K = atol(argv[1]);
  const long T = atol(argv[2]);  // records a tile
  auto run = [&](const char* name, const std::vector<long>& order) {
    const long S = n / 8;
    std::vector<int32_t> prev(S, -1), next(S, -1); std::vector<char> in(S, 0);
    long head=-1, tail=-1, size=0, miss=0;
    auto unlink=[&](long s){ if(prev[s]>=0) next[prev[s]]=next[s]; else head=next[s]; if(next[s]>=0) prev[next[s]]=prev[s]; else tail=prev[s]; };
    auto push=[&](long s){ prev[s]=-1; next[s]=head; if(head>=0) prev[head]=s; head=s; if(tail<0) tail=s; };
    for(long t: order){
      for(long o=t*T;o<std::min(n,(t+1)*T);++o){ long s=p[o]>>3;
        if(in[s]){ unlink(s); push(s);} else { ++miss; in[s]=1; push(s); if(++size>K){ long e=tail; unlink(e); in[e]=0; --size; } } } }
    printf("%-40s misses %.3f x ideal\n", name, double(miss)/(n/8)); fflush(stdout);
  };
  const long tiles=(n+T-1)/T;
  std::vector<long> seq(tiles); for(long t=0;t<tiles;++t) seq[t]=t;
  run("in order", seq);
  const long R = 65536, P = 2097152;
  for (auto [bz, by] : {std::pair{4l,8l}, std::pair{8l,16l}, std::pair{8l,32l}, std::pair{32l,4l}}) {
    std::vector<std::tuple<long,long,long,long,long,long>> keys;
    for(long t=0;t<tiles;++t){ long o=t*T; long z=o/P, y=(o%P)/R, w=(o%R)/T;
      keys.emplace_back(z/bz, y/by, w, z%bz, y%by, t);}
    std::sort(keys.begin(),keys.end());
    std::vector<long> ord; for(auto&k:keys) ord.push_back(std::get<5>(k));
    char name[64]; snprintf(name,64,"blocked bz=%ld by=%ld", bz, by); run(name, ord);
  }
}
