"""Fit the detector's learned finder (:mod:`vision.finder`) on rendered sets with ground truth, and export it.

``python -m synth.train_finder SET... [--out vision/data/finder.onnx] [--steps 5000] [--seed 2]``

Needs PyTorch (``pip install torch``; the product runs the exported file with ONNX Runtime alone). Each frame of
each set (folders as ``tableref evaluate`` reads them) is calibrated and turned to a top-down view at the finder's
scale; the net learns, on crops of those views, a heat map of the bases' centres (a Gaussian about each visible base,
the bases hardly in view left out either way), each centre's place in its cell and its base's diameter. The crops are
jittered in colour, light, blur, noise and JPEG compression, turned and mirrored, so that no look of one renderer is
special. Sets used here must not be the ones the result is reported on.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.table import calibrate_table, table_to_rectified
from tableref.config import load_config
from tableref.evaluate import load_samples
from tableref.sources import read_image
from vision.finder import DIAMETER_UNIT_MM, FINDER_PX_PER_MM, STRIDE

# Bases with less of their rim in view than this are neither taught as bases nor as mat.
MIN_VISIBILITY = 0.6
CROP_PX = 192
Frame = dict[str, Any]


def views(folders: Sequence[str]) -> list[Frame]:
    """Each frame of ``folders`` as a top-down view at the finder's scale with its bases' centres (px), diameters
    (mm) and visibility."""
    config = load_config()
    out = []
    for folder in folders:
        for sample in load_samples(folder, use_empty=False):
            image = read_image(sample.image)
            calibration = calibrate_table(image, sample.spec, sample.camera, settings=config.calibration)
            view = calibration.rectify(image, FINDER_PX_PER_MM)
            seen = sample.truth.get("visibility", {})
            models = sample.truth["models"]
            centre_mm = np.array([[m["x_mm"], m["y_mm"]] for m in models], np.float64).reshape(-1, 2)
            out.append(
                {
                    "image": view,
                    "centre_px": table_to_rectified(centre_mm, FINDER_PX_PER_MM) if len(models) else centre_mm,
                    "diameter_mm": np.array([m["base"]["diameter_mm"] for m in models], np.float64),
                    "visibility": np.array([float(seen.get(m["id"], 1.0)) for m in models]),
                }
            )
            print(f"{sample.name}: {len(models)} bases", flush=True)
    return out


def targets(
    centre_px: NDArray[np.float64],
    diameter_mm: NDArray[np.float64],
    visibility: NDArray[np.float64],
    size: int,
    reg_reach: int = 0,
) -> tuple[NDArray[np.float32], ...]:
    """The maps one crop of ``size`` px teaches, for bases at ``centre_px`` (N, 2) in crop pixels: heat (h, w),
    weight (h, w; 0 about bases hardly in view), offset and log diameter (3, h, w) and where they count (h, w;
    the centre's cell and those within ``reg_reach`` cells of it)."""
    n = size // STRIDE
    heat = np.zeros((n, n), np.float32)
    weight = np.ones((n, n), np.float32)
    reg = np.zeros((3, n, n), np.float32)
    has = np.zeros((n, n), np.float32)
    ys, xs = np.mgrid[0:n, 0:n]
    cell_x, cell_y = (xs + 0.5) * STRIDE - 0.5, (ys + 0.5) * STRIDE - 0.5
    for (u, v), d, seen in zip(centre_px, diameter_mm, visibility, strict=True):
        if not (-d < u < size + d and -d < v < size + d):
            continue
        r2 = (cell_x - u) ** 2 + (cell_y - v) ** 2
        if seen < MIN_VISIBILITY:
            weight[r2 < (0.5 * d) ** 2] = 0.0
            continue
        sigma = max(1.5, 0.08 * d)
        heat = np.maximum(heat, np.exp(-r2 / (2 * sigma * sigma)).astype(np.float32))
        gx, gy = (u + 0.5) / STRIDE - 0.5, (v + 0.5) / STRIDE - 0.5
        ix, iy = round(gx), round(gy)
        if 0 <= ix < n and 0 <= iy < n:
            heat[iy, ix] = 1.0
        # the cells about the centre learn the offset to it and the diameter too: the peak the net gives may be one
        # of them, and a base's size is then taught from more than one cell
        for jy in range(max(iy - reg_reach, 0), min(iy + reg_reach, n - 1) + 1):
            for jx in range(max(ix - reg_reach, 0), min(ix + reg_reach, n - 1) + 1):
                reg[:, jy, jx] = (gx - jx, gy - jy, math.log(d / DIAMETER_UNIT_MM))
                has[jy, jx] = 1.0
    return heat, weight, reg, has


def jittered(crop: NDArray[np.uint8], rng: np.random.Generator) -> NDArray[np.float32]:
    """``crop`` (H, W, 3) as floats in 0-1 with its colour, light, sharpness, noise and compression jittered."""
    img = crop.astype(np.float32) / 255.0
    img = img * rng.uniform(0.7, 1.3, 3).astype(np.float32) * np.float32(rng.uniform(0.6, 1.4))
    if rng.random() < 0.2:
        img = img[:, :, rng.permutation(3)]
    img = np.clip(img, 0, 1) ** np.float32(rng.uniform(0.7, 1.4))
    if rng.random() < 0.4:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.2))
    img = np.clip(img + rng.normal(0, rng.uniform(0, 0.03), img.shape).astype(np.float32), 0, 1)
    if rng.random() < 0.3:
        _ok, buf = cv2.imencode(
            ".jpg", (img * 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(20, 80))]
        )
        img = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.float32) / 255.0
    return np.asarray(img, np.float32)


def crop_of(
    frame: Frame, rng: np.random.Generator, reg_reach: int = 0
) -> tuple[NDArray[np.float32], tuple[NDArray[np.float32], ...]]:
    """One jittered, turned and mirrored crop of ``frame`` (most of them about a base) with its maps."""
    h, w = frame["image"].shape[:2]
    centres = frame["centre_px"]
    if len(centres) and rng.random() < 0.7:
        cx, cy = centres[rng.integers(len(centres))]
        x0 = int(np.clip(cx - rng.uniform(0.1, 0.9) * CROP_PX, 0, max(0, w - CROP_PX)))
        y0 = int(np.clip(cy - rng.uniform(0.1, 0.9) * CROP_PX, 0, max(0, h - CROP_PX)))
    else:
        x0, y0 = int(rng.integers(0, max(1, w - CROP_PX))), int(rng.integers(0, max(1, h - CROP_PX)))
    crop = np.zeros((CROP_PX, CROP_PX, 3), np.uint8)
    part = frame["image"][y0 : y0 + CROP_PX, x0 : x0 + CROP_PX]
    crop[: part.shape[0], : part.shape[1]] = part
    img = jittered(crop, rng)
    pts = centres - [x0, y0]
    turns = int(rng.integers(4))
    img = np.rot90(img, turns)
    for _ in range(turns):  # np.rot90 takes (x, y) to (y, size - 1 - x)
        pts = np.stack([pts[:, 1], CROP_PX - 1 - pts[:, 0]], axis=1)
    if rng.random() < 0.5:
        img = img[:, ::-1]
        pts = np.stack([CROP_PX - 1 - pts[:, 0], pts[:, 1]], axis=1)
    maps = targets(pts.reshape(-1, 2), frame["diameter_mm"], frame["visibility"], CROP_PX, reg_reach)
    return np.ascontiguousarray(img.transpose(2, 0, 1)) - np.float32(0.5), maps


def build_net(width: int = 32, stem_depth: int = 0) -> Any:
    """The finder: two strided 3x3 layers to cells of ``STRIDE`` px (``stem_depth`` more between them, at half the
    view's scale), five more of ``width`` channels with dilations 1-8 (a field of view of about 130 px), and a 1x1
    layer on both to the four maps (heat logit, offset x, y, log diameter)."""
    import torch.nn as nn

    def layer(i: int, o: int, stride: int = 1, dilation: int = 1) -> nn.Module:
        conv = nn.Conv2d(i, o, 3, stride, dilation, dilation=dilation, bias=False)
        return nn.Sequential(conv, nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class FinderNet(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            fine = [layer(16, 16) for _ in range(stem_depth)]
            self.stem = nn.Sequential(layer(3, 16, 2), *fine, layer(16, width, 2))
            self.ctx = nn.Sequential(*(layer(width, width, dilation=d) for d in (1, 2, 4, 8, 1)))
            self.head = nn.Conv2d(2 * width, 4, 1)

        def forward(self, x: Any) -> Any:
            import torch

            s = self.stem(x)
            return self.head(torch.cat([s, self.ctx(s)], 1))

    return FinderNet()


def loss(out: Any, heat: Any, weight: Any, reg: Any, has: Any) -> Any:
    """The heat map's focal loss (as CenterNet's) and the offsets' and diameter's L1 where a centre is."""
    import torch
    import torch.nn.functional as F

    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 0.999).float()
    neg = (1 - pos) * (1 - heat) ** 4
    focal = -(pos * (1 - p) ** 2 * torch.log(p)).sum() - (neg * p**2 * torch.log(1 - p) * weight).sum()
    l1 = (F.l1_loss(out[:, 1:], reg, reduction="none").sum(1) * has).sum() / has.sum().clamp(min=1)
    return focal / pos.sum().clamp(min=1) + l1


def fit(
    frames: list[Frame], steps: int, batch: int, seed: int, width: int = 32, stem_depth: int = 0, reg_reach: int = 0
) -> Any:
    """The net fitted to ``frames`` by AdamW with a one-cycle rate, ``steps`` batches of ``batch`` crops."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = build_net(width, stem_depth)
    opt = torch.optim.AdamW(net.parameters(), 2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps, pct_start=0.1)
    start, running = time.time(), math.nan
    for step in range(steps):
        crops = [crop_of(frames[rng.integers(len(frames))], rng, reg_reach) for _ in range(batch)]
        x = torch.from_numpy(np.stack([c[0] for c in crops]))
        maps = [torch.from_numpy(np.stack([c[1][k] for c in crops])) for k in range(4)]
        value = loss(net(x), *maps)
        opt.zero_grad()
        value.backward()
        opt.step()
        sched.step()
        running = value.item() if step == 0 else 0.98 * running + 0.02 * value.item()
        if step % 200 == 0 or step == steps - 1:
            print(f"step {step}: loss {running:.3f} ({time.time() - start:.0f} s)", flush=True)
    return net


def export(net: Any, out: Path) -> None:
    """``net`` with its batch norms folded into its convolutions, written as ONNX (any view size)."""
    import torch

    net.eval()
    for seq in (net.stem, net.ctx):
        for block in seq:
            conv, norm = block[0], block[1]
            s = norm.weight / torch.sqrt(norm.running_var + norm.eps)
            conv.weight.data = conv.weight.data * s[:, None, None, None]
            conv.bias = torch.nn.Parameter(norm.bias - norm.running_mean * s)
            block[1] = torch.nn.Identity()
    torch.onnx.export(
        net,
        torch.zeros(1, 3, 256, 320),
        str(out),
        input_names=["view"],
        output_names=["maps"],
        opset_version=13,
        dynamic_axes={"view": {2: "h", 3: "w"}, "maps": {2: "h4", 3: "w4"}},
        dynamo=False,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", help="folders of rendered frames with NAME.truth.json")
    parser.add_argument("--out", type=Path, default=Path("vision/data/finder.onnx"))
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--width", type=int, default=32, help="channels of the net's context layers")
    parser.add_argument("--stem-depth", type=int, default=0, help="3x3 layers at half the view's scale")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reg-reach", type=int, default=0, help="cells about a centre taught its offset and size")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: fitting the finder needs PyTorch (pip install torch)", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    frames = views(args.sets)
    print(f"{len(frames)} frames, {sum(len(f['centre_px']) for f in frames)} bases", flush=True)
    export(fit(frames, args.steps, args.batch, args.seed, args.width, args.stem_depth, args.reg_reach), args.out)
    print(f"finder written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
