#!/usr/bin/env bash
# Call 2: every plan the chooser weighs, timed, at short rows (8-255 elements) where call 1 ran
# far below a copy; Nsight Compute of the chosen rows kernel at bf16 layer norm of 64 elements.
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
mkdir -p /tmp/o
/tmp/ab/norm_sweep --validate --hidden 8,16,32,64,100,128,129,200,255 --out /tmp/o/validate-short.json > /tmp/o/validate-short.md 2>&1
/tmp/ab/norm_sweep --validate --hidden 100,700,1544,2500,6000,7000,11008,13824,20000,28672 --out /tmp/o/validate-mid.json > /tmp/o/validate-mid.md 2>&1
ncu --kernel-name regex:"rows_kernel.*bfloat16" --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section Occupancy --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum \
  /tmp/ab/norm_sweep --hidden 64 --out /tmp/o/x.json > /tmp/o/ncu-bf16-64.txt 2>&1
ncu --kernel-name regex:"rows_kernel<[^,]*, float" --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section Occupancy --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum \
  /tmp/ab/norm_sweep --hidden 64 --out /tmp/o/x.json > /tmp/o/ncu-fp32-64.txt 2>&1
tar -czf $OUT/call2.tar.gz -C /tmp/o .
