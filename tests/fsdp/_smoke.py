def hello(rank, world_size, x):
    import torch
    import torch.distributed as dist
    t = torch.ones(1) * rank
    dist.all_reduce(t)
    return (rank, world_size, x, t.item())
