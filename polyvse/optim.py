"""Adam, the optimiser of every training in polyvse (Kingma & Ba, 2015; the papers' choice),
and the gradient-norm clip every training loop applies.

PyTorch's fused kernel updates each parameter in one pass instead of the foreach
implementation's several: on one CPU thread it steps a 27,324 x 300 word table 3.5x faster
(6.5 ms against 22.5 ms). Same update rule, same hyper-parameters; on CUDA it is the fastest
kernel too.

The optimisers here call the kernels ``torch.optim.Adam(fused=True)`` and
``torch.optim.SparseAdam`` call, with the same state and the same state-dict layout (a test
compares them bit for bit), without ``torch.optim.Optimizer``: its first ``zero_grad`` or
``step`` imports ``torch._dynamo`` (the compiler, for a graph break), 1.1-1.3 s of every
training job, a third of a default training's start-up.

Word tables can go further (:func:`lazy_word_tables`): with a dense gradient every row of a
10-language table (32,878 x 300 on the default data; ~125K x 300 at Multi30K's size) is
zeroed, back-propagated into, clipped and stepped at every step although a batch uses a few
hundred words. A MULE(10) step on the default data took 49 ms, of which backward 22 ms, Adam
5 ms, zero_grad 2.5 ms and the clip 2.6 ms (cProfile); with lazy updates an epoch of it takes
2.3 s instead of 4.7 s, and an English EmbN's 1.43 s instead of 1.66 s. With sparse gradients
the table's rows are updated lazily (SparseAdam's rule, the LazyAdam of TensorFlow Addons): a
word absent from the batch keeps its vector and its moments, instead of drifting on stale
momentum as dense Adam moves it. It is a change of the update rule, so it is a setting
(``training.lazy_word_updates``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.optim._functional import sparse_adam


def adam(
    params: Iterable[torch.nn.Parameter] | Iterable[dict],
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    weight_decay: float = 0.0,
    lazy: Sequence[torch.nn.Parameter] = (),
) -> FusedAdam | LazyTableAdam:
    """Adam on the fused kernel (:class:`FusedAdam`); ``params`` as ``torch.optim.Adam`` takes
    them (tensors or groups).

    ``lazy``: parameters among ``params`` whose gradients are sparse (word tables made sparse by
    :func:`lazy_word_tables`); they are stepped by :class:`LazyAdam` (no weight decay: a decay
    would touch every row).
    """
    if not lazy:
        return FusedAdam(params, lr=lr, betas=betas, weight_decay=weight_decay)
    if weight_decay:
        raise ValueError("lazy word-table updates take no weight decay (it would move every row every step)")
    lazy_ids = {id(p) for p in lazy}
    params = list(params)
    if any(isinstance(p, dict) for p in params):
        raise ValueError("lazy word-table updates take a flat list of parameters, not groups")
    dense = [p for p in params if id(p) not in lazy_ids]
    tables = [p for p in params if id(p) in lazy_ids]
    return LazyTableAdam(
        FusedAdam(dense, lr=lr, betas=betas) if dense else None,
        LazyAdam(tables, lr=lr, betas=betas) if tables else None,
    )


class _Optimiser:
    """The interface and state-dict layout of ``torch.optim.Optimizer`` that the training
    loops use: ``param_groups`` (a scheduler sets their ``lr``), ``zero_grad``, ``step``,
    ``state_dict``, ``load_state_dict`` (a checkpoint of either loads into the other)."""

    defaults: dict[str, Any]

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict[str, Any]) -> None:
        params = list(params)
        if not params:
            raise ValueError("the optimiser got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = [{**defaults, **g, "params": list(g["params"])} for g in groups]
        self.state: dict[Tensor, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()

    def state_dict(self) -> dict[str, Any]:
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        return {"state": {index[id(p)]: s for p, s in self.state.items()}, "param_groups": groups}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        saved = state["param_groups"]
        if [len(g["params"]) for g in saved] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError("the optimiser state was saved for other parameter groups")
        param_of: dict[int, Tensor] = {}
        for group, saved_group in zip(self.param_groups, saved):
            group.update({k: saved_group[k] for k in self.defaults if k in saved_group})
            param_of.update(zip(saved_group["params"], group["params"]))
        # copies on the parameter's device and (but the step count) in its dtype, as torch's loader
        self.state = {
            param_of[int(i)]: {
                k: (v.to(device=param_of[int(i)].device, dtype=None if k == "step" else param_of[int(i)].dtype).clone())
                if isinstance(v, Tensor)
                else v
                for k, v in s.items()
            }
            for i, s in state["state"].items()
        }


class FusedAdam(_Optimiser):
    """``torch.optim.Adam(fused=True)``'s update (L2 weight decay, no AMSGrad): its kernel,
    ``torch._fused_adam_``, on every (device, dtype) group of parameters with a gradient;
    the step count a float32 tensor on the parameter's device, as torch keeps it."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            by_kind: dict[tuple, tuple[list[Tensor], ...]] = {}
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise ValueError("FusedAdam takes dense gradients; step a sparse word table with LazyAdam")
                state = self.state.get(p)
                if not state:
                    state = self.state[p] = {
                        "step": torch.zeros((), dtype=torch.float32, device=p.device),
                        "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                        "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
                    }
                lists = by_kind.setdefault((p.device, p.dtype), ([], [], [], [], []))
                for tensors, t in zip(lists, (p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"])):
                    tensors.append(t)
            beta1, beta2 = group["betas"]
            for params, grads, exp_avgs, exp_avg_sqs, steps in by_kind.values():
                torch._foreach_add_(steps, 1)
                torch._fused_adam_(
                    params,
                    grads,
                    exp_avgs,
                    exp_avg_sqs,
                    [],
                    steps,
                    amsgrad=False,
                    lr=group["lr"],
                    beta1=beta1,
                    beta2=beta2,
                    weight_decay=group["weight_decay"],
                    eps=group["eps"],
                    maximize=False,
                    grad_scale=None,
                    found_inf=None,
                )


class LazyAdam(_Optimiser):
    """``torch.optim.SparseAdam``: Adam on the rows of a sparse gradient only, by the same
    function (``torch.optim._functional.sparse_adam``); the step count an int per table."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise ValueError(
                        "LazyAdam takes sparse gradients (lazy_word_tables); step dense ones with FusedAdam"
                    )
                state = self.state.get(p)
                if not state:
                    state = self.state[p] = {
                        "step": 0,
                        "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                        "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
                    }
                state["step"] += 1
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                steps.append(state["step"])
            beta1, beta2 = group["betas"]
            sparse_adam(
                params,
                grads,
                exp_avgs,
                exp_avg_sqs,
                steps,
                eps=group["eps"],
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                maximize=False,
            )


class LazyTableAdam:
    """Fused Adam on the dense parameters, lazy Adam on the word tables: the optimiser
    interface the training loop uses (``zero_grad``, ``step``, ``state_dict``,
    ``load_state_dict``, ``param_groups``)."""

    def __init__(self, dense: FusedAdam | None, tables: LazyAdam | None) -> None:
        self.optimisers = {name: o for name, o in (("dense", dense), ("tables", tables)) if o is not None}

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [g for o in self.optimisers.values() for g in o.param_groups]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.optimisers.values():
            o.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for o in self.optimisers.values():
            o.step()

    def state_dict(self) -> dict[str, Any]:
        return {name: o.state_dict() for name, o in self.optimisers.items()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if set(state) != set(self.optimisers):
            raise ValueError(f"optimiser state holds {sorted(state)}, this optimiser {sorted(self.optimisers)}")
        for name, o in self.optimisers.items():
            o.load_state_dict(state[name])


def lazy_word_tables(model: nn.Module) -> list[nn.Parameter]:
    """Make every trainable ``nn.Embedding`` of ``model`` produce sparse gradients; return
    their weights (for :func:`adam`'s ``lazy``). The models are unchanged otherwise:
    ``sparse`` only decides the layout of the table's gradient."""
    tables = []
    for module in model.modules():
        if isinstance(module, nn.Embedding) and module.weight.requires_grad:
            module.sparse = True
            tables.append(module.weight)
    return tables


def clip_gradient_norm(params: Iterable[nn.Parameter], max_norm: float) -> Tensor:
    """``nn.utils.clip_grad_norm_`` (2-norm over all gradients, scaled by
    ``max_norm / (norm + 1e-6)`` when that is below 1) for gradients of which some are sparse;
    with dense gradients only it is torch's own. Returns the total norm before clipping."""
    params = [p for p in params if p.grad is not None]
    if not any(p.grad.is_sparse for p in params):
        return nn.utils.clip_grad_norm_(params, max_norm)
    for p in params:
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()  # repeated rows summed: the norm of the gradient, not of its parts
    grads = [p.grad._values() if p.grad.is_sparse else p.grad for p in params]
    if grads[0].device.type == "cpu":
        # a sum of squares per tensor: the CPU's clipped gradients as in every earlier run
        total = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
    else:
        # on an accelerator a tensor's norm is one kernel for all of them (the host's dispatch
        # of ~40 parameters' squares and products is what a SMALR step waits for)
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    torch._foreach_mul_(grads, scale)
    return total
