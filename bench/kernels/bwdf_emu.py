# Host emulation (Python + numpy, no GPU) of conv_bwd_filter_mma_kernel in
# src/cuda/conv_bwd_filter_mma.cuh: the plan (bwdf_plan), every thread's cp.async copy assignment
# and (n, p, q) row stepping, the XOR swizzle (asserts that every shared element of a slice is
# written), ldmatrix.x4.trans as the PTX ISA defines it (thread t gets rows 2*(t%4), +1 of column
# t/4 of each 8x8 matrix), the mma.m16n8k16 A/B/C fragment layouts, the epilogue (flip, alpha/beta,
# beta == 0 on a NaN dw) and the split reduction, compared exactly with a numpy reference on
# integer data. Keep it in step with the kernel when the index logic changes.
# Usage: python3 bench/kernels/bwdf_emu.py   (prints OK/FAIL per case, a few seconds)
import numpy as np, sys
BK=32; NT=256
def plan(npq,k,rsc,force_splits=0,force_cfg=-1):
    cfgs={0:(128,128,2,4),1:(128,64,4,2),2:(64,128,2,4),3:(64,64,2,4)}
    if force_cfg>=0: c=force_cfg
    else: c = (3 if rsc<=64 else 2) if k<=64 else (1 if rsc<=64 else 0)
    BM,BN,_,_=cfgs[c]
    tiles=((k+BM-1)//BM)*((rsc+BN-1)//BN)
    if force_splits>0: want=force_splits
    else:
        want=(264+tiles-1)//tiles; most=npq//512
        want=min(want,most)
    want=max(1,min(want,65535))
    chunk=(npq+want-1)//want; chunk=(chunk+BK-1)//BK*BK; chunk=max(chunk,BK)
    splits=(npq+chunk-1)//chunk if npq>0 else 1
    return cfgs[c],splits,chunk
def swz(rowb,row,chunk): return row*rowb+((chunk^(row&7))<<4)

def run(N,C,H,W,K,R,S,st,pad,dil,flip,alpha,beta,force_splits=0,force_cfg=-1,seed=0):
    rng=np.random.default_rng(seed)
    P=(H+2*pad-dil*(R-1)-1)//st+1; Q=(W+2*pad-dil*(S-1)-1)//st+1
    x=rng.integers(-3,4,size=N*H*W*C).astype(np.float64)
    dy=rng.integers(-3,4,size=N*P*Q*K).astype(np.float64)
    dw0=rng.integers(-3,4,size=K*R*S*C).astype(np.float64)
    npq=N*P*Q; rsc=R*S*C
    (BM,BN,WMS,WNS),splits,chunk=plan(npq,K,rsc,force_splits,force_cfg)
    pq=P*Q; step_n=BK//pq; rem=BK-step_n*pq; step_p=rem//Q; step_q=rem-step_p*Q
    WM=BM//WMS; WN=BN//WNS; MI=WM//16; NI=WN//8
    A_CPR=BM//8; B_CPR=BN//8; A_IT=BK*A_CPR//NT; B_IT=BK*B_CPR//NT
    A_RSTEP=NT//A_CPR; B_RSTEP=NT//B_CPR
    A_ROWB=BM*2; B_ROWB=BN*2
    dw=np.full(K*rsc,np.nan) if beta==0 else dw0.copy()
    ws=np.zeros((splits,K,rsc))
    for bz in range(splits):
     for by in range((K+BM-1)//BM):
      for bx in range((rsc+BN-1)//BN):
        n0=bx*BN; m0=by*BM
        rb=bz*chunk; re=min(rb+chunk,npq); kt_n=(re-rb+BK-1)//BK if re>rb else 0
        # thread state
        th=[]
        for tid in range(NT):
            d={}
            d['a_col']=tid%A_CPR; d['a_row0']=tid//A_CPR; d['b_col']=tid%B_CPR; d['b_row0']=tid//B_CPR
            d['a_col_ok']=m0+d['a_col']*8<K
            d['a_src']=(rb+d['a_row0'])*K+m0+d['a_col']*8
            bn=n0+d['b_col']*8; d['b_col_ok']=bn<rsc
            if d['b_col_ok']:
                tap=bn//C; d['b_c']=bn-tap*C; r=tap//S; s=tap-r*S
                d['hoff']=r*dil-pad; d['woff']=s*dil-pad
            else: d['b_c']=d['hoff']=d['woff']=0
            d['bn']=[];d['bp']=[];d['bq']=[]
            for i in range(B_IT):
                v=rb+d['b_row0']+i*B_RSTEP
                nn=v//pq; r2=v-nn*pq; pp=r2//Q; qq=r2-pp*Q
                d['bn'].append(nn);d['bp'].append(pp);d['bq'].append(qq)
            th.append(d)
        next_row=rb
        acc=np.zeros((8,32,MI,NI,4))
        for kt in range(kt_n):
            sa=np.full(BK*BM,np.nan); sb=np.full(BK*BN,np.nan)  # halves
            for tid in range(NT):
                d=th[tid]
                for i in range(A_IT):
                    row=d['a_row0']+i*A_RSTEP
                    ok=d['a_col_ok'] and next_row+row<re
                    off=swz(A_ROWB,row,d['a_col'])//2
                    sa[off:off+8]= dy[d['a_src']+i*A_RSTEP*K: d['a_src']+i*A_RSTEP*K+8] if ok else 0
                d['a_src']+=BK*K
                for i in range(B_IT):
                    row=d['b_row0']+i*B_RSTEP
                    hh=d['bp'][i]*st+d['hoff']; ww=d['bq'][i]*st+d['woff']
                    ok=d['b_col_ok'] and next_row+row<re and 0<=hh<H and 0<=ww<W
                    off=swz(B_ROWB,row,d['b_col'])//2
                    if ok:
                        src=((d['bn'][i]*H+hh)*W+ww)*C+d['b_c']; sb[off:off+8]=x[src:src+8]
                    else: sb[off:off+8]=0
                    q=d['bq'][i]+step_q; p=d['bp'][i]+step_p; n=d['bn'][i]+step_n
                    if q>=Q: q-=Q; p+=1
                    if p>=P: p-=P; n+=1
                    d['bq'][i]=q; d['bp'][i]=p; d['bn'][i]=n
            next_row+=BK
            assert not np.isnan(sa).any() and not np.isnan(sb).any()
            def ldsm_trans(smem, addrs):  # addrs: 32 byte addresses; returns regs[lane][4][2]
                out=np.zeros((32,4,2))
                for mi in range(4):
                    rows=[smem[addrs[8*mi+j]//2: addrs[8*mi+j]//2+8] for j in range(8)]
                    for t in range(32):
                        out[t,mi,0]=rows[2*(t%4)][t//4]; out[t,mi,1]=rows[2*(t%4)+1][t//4]
                return out
            for warp in range(8):
                wm=warp//WNS; wn=warp%WNS
                for kk in range(BK//16):
                    af=[None]*MI; bf=[[None,None] for _ in range(NI)]
                    for i in range(MI):
                        addrs=[]
                        for lane in range(32):
                            krow=kk*16+(lane&7)+((lane>>4)<<3); mcol=wm*WM+i*16+(((lane>>3)&1)<<3)
                            addrs.append(swz(A_ROWB,krow,mcol>>3))
                        af[i]=ldsm_trans(sa,addrs)
                    for j in range(0,NI,2):
                        addrs=[]
                        for lane in range(32):
                            krow=kk*16+(lane&7)+(((lane>>3)&1)<<3); ncol=wn*WN+j*8+((lane>>4)<<3)
                            addrs.append(swz(B_ROWB,krow,ncol>>3))
                        t4=ldsm_trans(sb,addrs)
                        bf[j]=t4[:,0:2]; bf[j+1]=t4[:,2:4]
                    for i in range(MI):
                        # A 16x16 from fragments (PTX m16n8k16 .f16 A layout)
                        A=np.zeros((16,16))
                        for lane in range(32):
                            g=lane>>2; t=lane&3
                            for reg in range(4):
                                for h2 in range(2):
                                    row=g+(8 if reg in (1,3) else 0); col=t*2+h2+(8 if reg>=2 else 0)
                                    A[row,col]=af[i][lane,reg,h2]
                        for j in range(NI):
                            B=np.zeros((16,8))
                            for lane in range(32):
                                g=lane>>2; t=lane&3
                                for reg in range(2):
                                    for h2 in range(2):
                                        B[t*2+h2+8*reg,g]=bf[j][lane,reg,h2]
                            D=A@B
                            for lane in range(32):
                                g=lane>>2; t=lane&3
                                acc[warp,lane,i,j,0]+=D[g,2*t]; acc[warp,lane,i,j,1]+=D[g,2*t+1]
                                acc[warp,lane,i,j,2]+=D[g+8,2*t]; acc[warp,lane,i,j,3]+=D[g+8,2*t+1]
        # epilogue
        for warp in range(8):
            wm=warp//WNS; wn=warp%WNS
            for lane in range(32):
                for j in range(NI):
                    nn=n0+wn*WN+j*8+(lane&3)*2
                    if nn>=rsc: continue
                    dcol=nn
                    if splits==1 and flip:
                        tap=nn//C; cc=nn-tap*C; r=tap//S; s=tap-r*S; dcol=((R-1-r)*S+(S-1-s))*C+cc
                    for i in range(MI):
                        for half in range(2):
                            m=m0+wm*WM+i*16+(lane>>2)+half*8
                            if m>=K: continue
                            v=acc[warp,lane,i,j,half*2:half*2+2]
                            if splits>1: ws[bz,m,nn:nn+2]=v
                            else:
                                o=alpha*v
                                if beta!=0: o=o+beta*dw[m*rsc+dcol:m*rsc+dcol+2]
                                dw[m*rsc+dcol:m*rsc+dcol+2]=o
    if splits>1:
        for idx in range(0,K*rsc,2):
            s0=ws[:,idx//rsc,idx%rsc].sum(); s1=ws[:,idx//rsc,idx%rsc+1].sum()
            m=idx//rsc; nn=idx%rsc; dcol=nn
            if flip:
                tap=nn//C; cc=nn-tap*C; r=tap//S; s=tap-r*S; dcol=((R-1-r)*S+(S-1-s))*C+cc
            o=np.array([alpha*s0,alpha*s1])
            if beta!=0: o=o+beta*dw[m*rsc+dcol:m*rsc+dcol+2]
            dw[m*rsc+dcol:m*rsc+dcol+2]=o
    # reference
    X=x.reshape(N,H,W,C); DY=dy.reshape(N,P,Q,K); ref=np.zeros((K,R,S,C))
    for rr in range(R):
        for ss in range(S):
            r=R-1-rr if flip else rr; s=S-1-ss if flip else ss
            for p in range(P):
                for q in range(Q):
                    h=p*st-pad+r*dil; w_=q*st-pad+s*dil
                    if 0<=h<H and 0<=w_<W:
                        ref[:,rr,ss,:]+=DY[:,p,q,:].T@X[:,h,w_,:]
    ref=alpha*ref.reshape(-1)+(beta*dw0 if beta!=0 else 0)
    err=np.abs(dw-ref).max()
    print(f"N{N} C{C} {H}x{W} K{K} {R}x{S} s{st} p{pad} d{dil} flip{flip} a{alpha} b{beta} cfg {BM}x{BN} splits {splits} chunk {chunk}: maxerr {err} maxref {np.abs(ref).max()}", "OK" if err<1e-9 else "FAIL")
    return err<1e-9
ok=True
ok&=run(3,24,9,10,72,3,3,1,1,1,0,1.0,0.0,force_splits=2,force_cfg=0)
ok&=run(12,8,3,3,16,3,3,1,1,1,1,0.5,1.0,force_splits=2,force_cfg=3)
ok&=run(7,16,5,4,32,2,3,1,0,1,1,1.0,-1.0)
ok&=run(2,72,11,9,40,3,3,3,2,2,0,1.0,0.0,force_cfg=2)
ok&=run(3,8,20,20,8,3,3,1,1,1,1,1.0,0.0)
ok&=run(2,8,5,6,16,3,3,1,1,1,1,1.0,0.0,force_splits=3,force_cfg=3)
ok&=run(1,16,7,9,24,2,3,2,1,1,0,2.0,-1.0,force_splits=1,force_cfg=2)
ok&=run(3,8,6,5,8,3,3,1,2,2,1,1.0,0.5,force_splits=2,force_cfg=1)
ok&=run(1,8,4,4,136,1,1,1,0,1,0,1.0,0.0,force_splits=1,force_cfg=0)
print("ALL OK" if ok else "SOME FAIL")
sys.exit(0 if ok else 1)
