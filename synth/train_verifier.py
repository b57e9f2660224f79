"""Fit the detector's learned verifier (:mod:`vision.verify`) on rendered sets with ground truth.

``python -m synth.train_verifier SET... [--out vision/data/verifier.npz]``

Each frame of each set (folders as ``tableref evaluate`` reads them) is run through the pipeline with the verifier
off; every circle read is labelled a base where a visible model of the truth stands within a quarter of its
diameter, and the verifier learns to tell the two apart from the circles' features. Sets used here must not be the
ones the result is reported on.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from calibration.table import rectified_to_table
from tableref.config import load_config
from tableref.evaluate import Sample, load_samples
from tableref.pipeline.frame import detect_frame
from tableref.settings import Settings
from tableref.sources import read_image
from vision.verify import Verifier, features

# A circle read within this share of its diameter of a visible model's centre is that model's base.
MATCH_SHARE = 0.25
# Models with less of their rim in view than this are left out of the labels either way (neither base nor not).
MIN_VISIBILITY = 0.3


def _labelled(sample: Sample, config: Settings) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """(N, F) features and (N,) labels (1 base, 0 not, NaN: a hardly visible model's, left out) of one frame."""
    image = read_image(sample.image)
    analysis = detect_frame(image, sample.spec, config, sample.camera)
    topdown = analysis.calibration.rectify(image, analysis.px_per_mm)
    feats = features(topdown, analysis.detections, analysis.px_per_mm)
    visibility = sample.truth.get("visibility", {})
    truth = np.array([[m["x_mm"], m["y_mm"]] for m in sample.truth["models"]]).reshape(-1, 2)
    seen = np.array([float(visibility.get(m["id"], 1.0)) for m in sample.truth["models"]])
    # in detection order (the state's models are ordered along the table); the rim's parallax, a millimetre or
    # two at most, is far inside the match's reach
    found = rectified_to_table(analysis.detections.center_px, analysis.px_per_mm).reshape(-1, 2)
    labels = np.zeros(len(found))
    if len(truth) and len(found):
        apart = np.hypot(found[:, None, 0] - truth[None, :, 0], found[:, None, 1] - truth[None, :, 1])
        near = apart <= MATCH_SHARE * analysis.detections.diameter_mm[:, None]
        labels[(near & (seen[None, :] >= MIN_VISIBILITY)).any(axis=1)] = 1.0
        labels[(near & (seen[None, :] < MIN_VISIBILITY)).any(axis=1) & (labels == 0)] = np.nan
    return feats, labels


def fit(feats: NDArray[np.float32], labels: NDArray[np.float64], hidden: int, epochs: int, seed: int) -> Verifier:
    """A verifier fitted to ``feats`` (N, F) and ``labels`` (N,) of 0 and 1: full-batch Adam on the cross-entropy,
    bases and others weighed equally, with a little weight decay."""
    rng = np.random.default_rng(seed)
    x = np.asarray(feats, np.float64)
    y = np.asarray(labels, np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    weight = np.where(y > 0.5, 0.5 / max(y.mean(), 1e-6), 0.5 / max(1.0 - y.mean(), 1e-6))
    params = {
        "w1": rng.normal(0.0, 1.0 / np.sqrt(x.shape[1]), (x.shape[1], hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0.0, 1.0 / np.sqrt(hidden), hidden),
        "b2": np.zeros(()),
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    rate, decay, beta1, beta2 = 0.01, 1e-4, 0.9, 0.999
    for step in range(1, epochs + 1):
        h = np.tanh(z @ params["w1"] + params["b1"])
        p = 1.0 / (1.0 + np.exp(-np.clip(h @ params["w2"] + params["b2"], -40, 40)))
        d_logit = weight * (p - y) / len(y)
        d_h = np.outer(d_logit, params["w2"]) * (1.0 - h**2)
        grads = {
            "w2": h.T @ d_logit + decay * params["w2"],
            "b2": np.asarray(d_logit.sum()),
            "w1": z.T @ d_h + decay * params["w1"],
            "b1": d_h.sum(axis=0),
        }
        for k, g in grads.items():
            m, v = moments[k]
            m[...] = beta1 * m + (1 - beta1) * g
            v[...] = beta2 * v + (1 - beta2) * g**2
            params[k] = params[k] - rate * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + 1e-8)
    f32 = np.float32
    return Verifier(
        mean.astype(f32),
        scale.astype(f32),
        params["w1"].astype(f32),
        params["b1"].astype(f32),
        params["w2"].astype(f32),
        float(params["b2"]),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synth.train_verifier", description=__doc__)
    parser.add_argument("sets", nargs="+", type=Path, help="folders of frames with NAME.truth.json")
    parser.add_argument("--out", type=Path, default=Path("vision/data/verifier.npz"), help="where to write it")
    parser.add_argument("--config", help="settings TOML (the detector whose circles are verified)")
    parser.add_argument("--hidden", type=int, default=16, help="units of the hidden layer (default: 16)")
    parser.add_argument("--epochs", type=int, default=300, help="full-batch steps (default: 300)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    config = load_config(args.config)
    # the circles the detector reads before the verifier judges them
    config = dataclasses.replace(config, vision=config.vision.replaced({"verifier.min_probability": 0.0}))
    all_feats, all_labels = [], []
    for folder in args.sets:
        for sample in load_samples(folder):
            start = time.perf_counter()
            feats, labels = _labelled(sample, config)
            all_feats.append(feats)
            all_labels.append(labels)
            print(
                f"{sample.name}: {int(np.nansum(labels))} bases, {int((labels == 0).sum())} others "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    feats = np.concatenate(all_feats)
    labels = np.concatenate(all_labels)
    keep = np.isfinite(labels)
    verifier = fit(feats[keep], labels[keep], args.hidden, args.epochs, args.seed)
    p = verifier.probability(feats[keep])
    y = labels[keep] > 0.5
    print(f"fitted on {int(y.sum())} bases and {int((~y).sum())} others: at 0.5, {np.mean(p[y] >= 0.5):.1%} of "
          f"the bases kept, {np.mean(p[~y] >= 0.5):.1%} of the others")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    verifier.save(args.out)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
