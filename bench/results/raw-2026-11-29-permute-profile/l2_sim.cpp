// LRU simulation of one column's source-sector reads for a gather by perm, for tile processing orders.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
int main(int argc,char**argv){
  const long n=1l<<26; std::vector<int32_t> p(n);
  FILE*f=fopen(argc>2?argv[2]:"perm.bin","rb"); fread(p.data(),4,n,f); fclose(f);
  const long K = atol(argv[1]);  // cache capacity in sectors
  const long T = 1024;           // tile records
  const long tiles = n / T;
  auto run = [&](const char* name, auto&& tile_at) {
    // LRU via timestamps + approximate: exact LRU with a doubly linked list over sector ids
    const long S = n / 8;
    std::vector<int32_t> prev(S, -1), next(S, -1); std::vector<char> in(S, 0);
    long head=-1, tail=-1, size=0, miss=0;
    auto unlink=[&](long s){ if(prev[s]>=0) next[prev[s]]=next[s]; else head=next[s]; if(next[s]>=0) prev[next[s]]=prev[s]; else tail=prev[s]; };
    auto push=[&](long s){ prev[s]=-1; next[s]=head; if(head>=0) prev[head]=s; head=s; if(tail<0) tail=s; };
    for(long w=0; w<tiles; ++w){ long t = tile_at(w);
      for(long o=t*T;o<(t+1)*T;++o){ long s=p[o]>>3;
        if(in[s]){ unlink(s); push(s);} else { ++miss; in[s]=1; push(s); if(++size>K){ long e=tail; unlink(e); in[e]=0; --size; } } } }
    printf("%-28s misses %ld = %.3f x ideal\n", name, miss, double(miss)/(n/8));
  };
  run("in order", [&](long w){ return w; });
  for (long D : {2048l*1024, 2100l*1000}) for (long streams_cap : {0l}) {
    (void)streams_cap;
    const long Dt = (D + T/2) / T;  // stride in tiles
    const long S = (tiles + Dt - 1) / Dt;
    char name[64]; snprintf(name, 64, "interleave D=%ld (S=%ld)", Dt*T, S);
    // w -> (k = w % S, u = w / S) ; tile = k*Dt + u, skipping tiles past the end
    std::vector<long> order; order.reserve(tiles);
    for (long u=0; u<Dt; ++u) for(long k=0;k<S;++k){ long t=k*Dt+u; if(t<tiles) order.push_back(t);} 
    run(name, [&](long w){ return order[w]; });
  }
}
