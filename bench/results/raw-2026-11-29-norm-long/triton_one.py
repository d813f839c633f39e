# Probe (not part of the library): torch.compile's RMS norm of 1024 x 32768 fp32 rows alone, run once
# between cudaProfilerStart/Stop (Nsight Compute), so its Triton source, PTX and SASS can be read.
import torch
import torch.nn.functional as F
x = torch.randn(1024, 32768, device="cuda")
w = torch.randn(32768, device="cuda")
fn = torch.compile(lambda t: F.rms_norm(t, (32768,), w, 1e-6), dynamic=False)
fn(x)
torch.cuda.synchronize()
torch.cuda.profiler.start()
fn(x)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
