import torch, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from fsdp_ref import fully_shard  # or: from torch.distributed.fsdp import fully_shard

dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
mesh = init_device_mesh("cuda" if torch.cuda.is_available() else "cpu", (dist.get_world_size(),))
model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(4)])
for layer in model:  # bottom-up: one all-gather / reduce-scatter group per layer
    fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)  # the root: remaining params, and it drives the iteration
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)  # parameters are Shard(0) DTensors
model(torch.randn(8, 64, device=mesh.device_type)).sum().backward()
opt.step()
dist.destroy_process_group()
