#!/usr/bin/env bash
# One H200: order_probe timed, then once more under Nsight Compute (DRAM bytes of every gq launch).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/op.tar.xz -C /tmp/pp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 200 /tmp/pp/order_probe 2>&1 | tee "$R/order.txt"
timeout 150 ncu --kernel-name regex:gq --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum \
  /tmp/pp/order_probe once > "$R/order-ncu.txt" 2>&1; echo "ncu rc $?"
grep -E "^\||dram__bytes_read|gpu__time" "$R/order-ncu.txt" | head -80
