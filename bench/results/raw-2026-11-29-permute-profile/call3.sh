#!/usr/bin/env bash
# One H200: smid_probe timed, then once more under Nsight Compute (DRAM bytes of every gq launch).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/sp.tar.xz -C /tmp/pp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 150 /tmp/pp/smid_probe 2>&1 | tee "$R/smid.txt"
timeout 120 ncu --kernel-name regex:gq --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum \
  /tmp/pp/smid_probe once > "$R/smid-ncu.txt" 2>&1; echo "ncu rc $?"
grep -E "dram__bytes_read" "$R/smid-ncu.txt"
