// Counting experiment (CPU, serial tree, double): interactions per target of the group walk on
// a Plummer sphere, for Morton or Hilbert keys, several group formations and MAC variants.
// Build from the repository root after `make build`:
//   g++ -O2 -fopenmp -std=c++17 -Iphysics -Icore -Ibackends -isystem .deps/install-openmp/include \
//     group-count.cpp -o group-count
// Usage: group-count N HILBERT(0/1) DACC MODE(0 runs, 1 leaves, 2 leaves of one parent) GROUP_CELL
// Environment: SUB=k (k sub-boxes per group), AMIN_ONLY=1 (distance to the nearest member),
// EXACT=1 (every member's own criterion).
#include "gravity/tree.hpp"
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <vector>
#include <random>
#include <algorithm>
#include <numeric>
#include <cstdlib>
using u64 = std::uint64_t;
using hayate::gravity::hilbert_key;
using hayate::gravity::morton_key;
static u64 morton(u64 x,u64 y,u64 z){return morton_key(x,y,z);}
static u64 hilbert(u64 x,u64 y,u64 z){return hilbert_key(x,y,z);}
struct Node{int b,e,level; double cx,cy,cz,m,bj; int first,nch;};
int main(int argc,char**argv){
  int N=argc>1?atoi(argv[1]):1<<20; int use_h=argc>2?atoi(argv[2]):0; double dacc=argc>3?atof(argv[3]):1.0/512;
  int mode=argc>4?atoi(argv[4]):0; int G=32, leaf=32, gcell=argc>5?atoi(argv[5]):64;
  std::mt19937_64 rng(7); std::uniform_real_distribution<double> U(0,1);
  std::vector<double> x(N),y(N),z(N),ax(N);
  double sc=3*M_PI/16;
  for(int i=0;i<N;i++){ double r; do{ r=1/std::sqrt(std::pow(U(rng),-2.0/3)-1);}while(r>20);
    double ct=2*U(rng)-1, ph=2*M_PI*U(rng), st=std::sqrt(1-ct*ct);
    x[i]=r*st*std::cos(ph)*sc; y[i]=r*st*std::sin(ph)*sc; z[i]=r*ct*sc;
    double rr=r*sc; ax[i]= rr/std::pow(rr*rr+sc*sc,1.5); }
  double lo=1e30,hi=-1e30; for(int i=0;i<N;i++){lo=std::min({lo,x[i],y[i],z[i]});hi=std::max({hi,x[i],y[i],z[i]});}
  double side=(hi-lo)*1.0001; int B=21; double cells=double(1<<B);
  std::vector<u64> key(N); std::vector<int> ord(N);
  for(int i=0;i<N;i++){u64 ix=u64((x[i]-lo)/side*cells),iy=u64((y[i]-lo)/side*cells),iz=u64((z[i]-lo)/side*cells); key[i]=use_h?hilbert(ix,iy,iz):morton(ix,iy,iz);}
  std::iota(ord.begin(),ord.end(),0); std::stable_sort(ord.begin(),ord.end(),[&](int a,int b){return key[a]<key[b];});
  std::vector<double> X(N),Y(N),Z(N),A(N); std::vector<u64> K(N);
  for(int i=0;i<N;i++){X[i]=x[ord[i]];Y[i]=y[ord[i]];Z[i]=z[ord[i]];A[i]=ax[ord[i]];K[i]=key[ord[i]];}
  // build tree (BFS)
  std::vector<Node> nodes; nodes.push_back({0,N,0}); 
  for(size_t q=0;q<nodes.size();q++){ Node nd=nodes[q]; nodes[q].first=-1; nodes[q].nch=0;
    if(nd.e-nd.b>leaf && nd.level<B){ int shift=3*(B-1-nd.level); int prev=nd.b; int first=nodes.size(); int c=0;
      for(int d=0;d<8;d++){ int at=prev; while(at<nd.e && int((K[at]>>shift)&7)==d) at++; if(at>prev){nodes.push_back({prev,at,nd.level+1}); c++;} prev=at;}
      nodes[q].first=first; nodes[q].nch=c; } }
  for(auto&nd:nodes){ double m=0,sx=0,sy=0,sz=0; for(int i=nd.b;i<nd.e;i++){m+=1.0/N;sx+=X[i];sy+=Y[i];sz+=Z[i];} int c=nd.e-nd.b; nd.m=m; nd.cx=sx/c;nd.cy=sy/c;nd.cz=sz/c; double bb=0; for(int i=nd.b;i<nd.e;i++){double dx=X[i]-nd.cx,dy=Y[i]-nd.cy,dz=Z[i]-nd.cz; bb=std::max(bb,dx*dx+dy*dy+dz*dz);} nd.bj=std::sqrt(bb);}
  // groups: runs of G cut at boundaries between children of cells with > gcell*G particles
  std::vector<char> cut(N+1,0); for(auto&nd:nodes) if(nd.e-nd.b>gcell*G && nd.nch) for(int c=0;c<nd.nch;c++) cut[nodes[nd.first+c].b]=1;
  std::vector<int> gb; if(mode==0){ int start=0; gb.push_back(0); for(int i=1;i<=N;i++){ if(i==N||cut[i]||i-start==G){ if(i<N) gb.push_back(i); start=i; } } gb.push_back(N);}
  else { // pack whole leaves in order; mode 2: also never cross a parent boundary
    std::vector<int> parent(nodes.size(),-1); for(size_t q=0;q<nodes.size();q++) for(int c=0;c<nodes[q].nch;c++) parent[nodes[q].first+c]=q;
    std::vector<int> leaves; for(size_t q=0;q<nodes.size();q++) if(nodes[q].nch==0) leaves.push_back(q);
    std::sort(leaves.begin(),leaves.end(),[&](int a,int b){return nodes[a].b<nodes[b].b;});
    gb.push_back(0); int cur=0, par=-2; for(int q:leaves){ int c=nodes[q].e-nodes[q].b; bool newg = cur>0 && (cur+c>G || cut[nodes[q].b] || (mode==2 && parent[q]!=par)); if(newg){ gb.push_back(nodes[q].b); cur=0;} if(cur==0) par=parent[q]; cur+=c; while(cur>G){ gb.push_back(gb.back()+G); cur-=G; } }
    gb.push_back(N); }
  int ng=gb.size()-1; double tot_n=0,tot_p=0,tot_t=0, diag=0, tot_n_l=0, tot_p_l=0; long targets=0;
  #pragma omp parallel for reduction(+:tot_n,tot_p,tot_t,diag,targets,tot_n_l,tot_p_l) schedule(dynamic,64)
  for(int g=0;g<ng;g++){ int b=gb[g],e=gb[g+1]; double mn[3]={1e30,1e30,1e30},mx[3]={-1e30,-1e30,-1e30},amin=1e30;
    for(int i=b;i<e;i++){ double p[3]={X[i],Y[i],Z[i]}; for(int k=0;k<3;k++){mn[k]=std::min(mn[k],p[k]);mx[k]=std::max(mx[k],p[k]);} amin=std::min(amin,A[i]); }
    diag+=std::sqrt((mx[0]-mn[0])*(mx[0]-mn[0])+(mx[1]-mn[1])*(mx[1]-mn[1])+(mx[2]-mn[2])*(mx[2]-mn[2]));
    std::vector<int> st{0}; long nn=0,np=0,nt=0;
    while(!st.empty()){ int q=st.back(); st.pop_back(); const Node&nd=nodes[q]; nt++;
      double c[3]={nd.cx,nd.cy,nd.cz}, d2=0; for(int k=0;k<3;k++){ double dd=std::max({mn[k]-c[k],0.0,c[k]-mx[k]}); d2+=dd*dd;}
      bool acc= d2>nd.bj*nd.bj && nd.m*nd.bj*nd.bj <= dacc*amin*d2*d2;
      if(getenv("SUB")){ int k=atoi(getenv("SUB")); int cnt=e-b; acc=true; for(int s0=0;s0<k && acc;s0++){ int sb=b+cnt*s0/k, se=b+cnt*(s0+1)/k; if(se<=sb) continue; double lo3[3]={1e30,1e30,1e30},hi3[3]={-1e30,-1e30,-1e30},am=1e30; for(int i=sb;i<se;i++){double p[3]={X[i],Y[i],Z[i]}; for(int q=0;q<3;q++){lo3[q]=std::min(lo3[q],p[q]);hi3[q]=std::max(hi3[q],p[q]);} am=std::min(am,A[i]);} double dd2=0; for(int q=0;q<3;q++){double dd=std::max({lo3[q]-c[q],0.0,c[q]-hi3[q]}); dd2+=dd*dd;} acc = dd2>nd.bj*nd.bj && nd.m*nd.bj*nd.bj <= dacc*am*dd2*dd2; } }
      if(getenv("AMIN_ONLY")){ double am=1e30; for(int i=b;i<e;i++) am=std::min(am,A[i]); double dmin2=1e30; for(int i=b;i<e;i++){double dx=X[i]-c[0],dy=Y[i]-c[1],dz=Z[i]-c[2]; dmin2=std::min(dmin2,dx*dx+dy*dy+dz*dz);} acc = dmin2>nd.bj*nd.bj && nd.m*nd.bj*nd.bj <= dacc*am*dmin2*dmin2; }
      if(getenv("EXACT")){ acc=true; for(int i=b;i<e && acc;i++){ double dx=X[i]-c[0],dy=Y[i]-c[1],dz=Z[i]-c[2]; double di2=dx*dx+dy*dy+dz*dz; acc = di2>nd.bj*nd.bj && nd.m*nd.bj*nd.bj <= dacc*A[i]*di2*di2; } }
      if(acc) nn++; else if(nd.nch==0) np+=nd.e-nd.b; else for(int k=0;k<nd.nch;k++) st.push_back(nd.first+k); }
    int cnt=e-b; tot_n_l+=nn; tot_p_l+=np; tot_n+=double(nn)*cnt; tot_p+=double(np)*cnt; tot_t+=nt; targets+=cnt; }
  printf("mode %d gcell %d lanecost/target=%.0f ",mode,gcell,(tot_n_l+tot_p_l)*G/double(N)); printf("%s N=%d dacc=%g groups=%d (full %.3f) nodes/target=%.0f particles/target=%.0f tests/group=%.0f mean diag=%.4g\n", use_h?"hilbert":"morton",N,dacc,ng,double(N)/ng/G,tot_n/targets,tot_p/targets,tot_t/ng,diag/ng);
}
