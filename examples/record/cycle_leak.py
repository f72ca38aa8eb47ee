"""A CPU training loop with a reference cycle that holds a tensor (seed 003's bug): each step builds
two graph nodes that point at each other, so reference counting never frees them and their
tensors live until the cycle collector runs. Record it, with the cycles written:

    memlens record --cycles --cycles-device cpu -- /usr/bin/python3 examples/record/cycle_leak.py

On a GPU machine drop --cycles-device cpu and the script's tensors go to CUDA: memlens also writes
a snapshot per step (torch.cuda.memory history) that `memlens view` opens next to the cycles.
"""

import gc

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Node:
    """A node of a hand-written autograd graph: its value and the nodes it links to."""

    def __init__(self, value):
        self.value = value
        self.links = []


def step(model, opt, x):
    a = Node(model(x))
    b = Node(torch.empty(256, 256, device=device))  # 256 KiB kept alive by the cycle
    a.links.append(b)
    b.links.append(a)  # the cycle: a -> b -> a
    loss = a.value.pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


model = torch.nn.Linear(256, 256).to(device)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
for i in range(60):
    loss = step(model, opt, torch.randn(32, 256, device=device))
    if i % 20 == 19:
        gc.collect()  # what finally frees the cycles, all at once
print("trained 60 steps on %s, last loss %.4f" % (device, loss))
