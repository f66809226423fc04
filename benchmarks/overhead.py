"""Cost of single-pass uncertainty: LevyNet mean+σ against the softmax twin and samplers.

One batch of irregular multichannel histories (256 series × 200 observations over 5 channels,
10 queries each). Timed interleaved, median of repeats, in one process:

* ``levy``        LevyNet, mean and σ in one forward pass;
* ``softmax``     the softmax twin (same network, scaled dot-product attention), mean only;
* ``mc_dropout``  the softmax twin with dropout kept on, 20 passes;
* ``sampler``     LevyNet drawing 50 outputs from the Poisson construction of its last layer.

Prints each as a ratio to the softmax twin and writes ``benchmarks/results/overhead.md``.

Run: ``python -m benchmarks.overhead [--repeats 7] [--threads N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from levy_sklearn import LevyNet

from ._common import short_commit, stamp, write_report


def make_batch(n_series=256, n_obs=200, n_channels=5, n_queries=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    # Irregular sampling: exponential gaps, channels drawn at random per observation.
    gaps = torch.distributions.Exponential(torch.tensor(1.0)).sample((n_series, n_obs))
    times = -gaps.flip(-1).cumsum(-1).flip(-1)
    return {
        "times": times,
        "channels": torch.randint(0, n_channels, (n_series, n_obs), generator=g),
        "values": torch.randn(n_series, n_obs, generator=g),
        "mask": torch.rand(n_series, n_obs, generator=g) > 0.1,
        "query_times": torch.rand(n_series, n_queries, generator=g) * 5,
        "query_channels": torch.randint(0, n_channels, (n_series, n_queries), generator=g),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = {
        "n_channels": 5,
        "n_targets": 5,
        "d_model": 64,
        "n_heads": 4,
        "n_layers": 2,
        "n_windowed_heads": 2,
    }
    levy = LevyNet(**config).eval()
    softmax = LevyNet(**config, attention="softmax").eval()
    dropout = LevyNet(**config, attention="softmax", dropout=0.1).train()
    batch = make_batch()

    def run_levy():
        return levy(**batch)[:2]

    def run_softmax():
        return softmax(**batch)[0]

    def run_mc_dropout():
        return torch.stack([dropout(**batch)[0] for _ in range(20)]).std(0)

    def run_sampler():
        return levy.sample(**batch, n_samples=50).std(0)

    runs = {
        "levy": run_levy,
        "softmax": run_softmax,
        "mc_dropout": run_mc_dropout,
        "sampler": run_sampler,
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    with torch.inference_mode():
        for fn in runs.values():  # warm-up
            fn()
        for _ in range(args.repeats):
            for name, fn in runs.items():  # interleaved, so drift hits all alike
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t) for name, t in times.items()}
    base = median["softmax"]
    commit = short_commit()
    lines = [
        "# Overhead of single-pass uncertainty",
        "",
        f"{stamp(commit)}"
        f", {args.threads} threads, median of {args.repeats} interleaved repeats; batch of 256 "
        "series × 200 irregular observations over 5 channels, 10 queries each; "
        f"network {config}.",
        "",
        "| method | passes | median time (ms) | ratio to softmax twin |",
        "|---|---|---|---|",
    ]
    passes = {"levy": 1, "softmax": 1, "mc_dropout": 20, "sampler": "1 + 50 draws"}
    for name in runs:
        lines.append(
            f"| {name} | {passes[name]} | {1e3 * median[name]:.1f} | {median[name] / base:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    write_report(text, "overhead.md")


if __name__ == "__main__":
    main()
