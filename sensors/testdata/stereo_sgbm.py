"""Match a simvis stereo pair with OpenCV's StereoSGBM and compare its
disparities with the ground truth from a depth camera at the left camera.

An independent reader of simvis's published outputs: it uses only what a
user has (LEFT.json, RIGHT.json, DEPTH.json with K and optical_pose as the
sensors package documents them, the two PNGs and DEPTH.depth.f32), numpy
and cv2. Run with Debian's /usr/bin/python3 (python3-opencv).

usage: stereo_sgbm.py DIR LEFT RIGHT DEPTH

The pair must be rectified as published: equal K, equal orientation, the
right camera on the left one's optical x axis. The ground-truth disparity
of left pixel (u, v) is fx * B / z, z the depth camera's depth there and B
the distance between the optical frames' origins.

Prints JSON: baseline, fx, the number of textured pixels (5x5 local
standard deviation of the left image's gray levels of at least 4), of those
where SGBM found a disparity, of those within 1 px of the ground truth, and
the fraction within 1 px.
"""

import json
import sys

import cv2
import numpy as np


def rotation(roll, pitch, yaw):
    """R = Rz(yaw) Ry(pitch) Rx(roll), angles in degrees (URDF / ROS rpy)."""
    r, p, y = np.radians([roll, pitch, yaw])
    rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def frame(info):
    p = info["optical_pose"]
    return rotation(p["roll"], p["pitch"], p["yaw"]), np.array([p["x"], p["y"], p["z"]])


def main():
    d, left, right, depth = sys.argv[1:5]
    info = {n: json.load(open(f"{d}/{n}.json")) for n in (left, right, depth)}
    K = np.array(info[left]["K"]).reshape(3, 3)
    for n in (right, depth):
        if not np.allclose(np.array(info[n]["K"]).reshape(3, 3), K, rtol=0, atol=1e-9):
            sys.exit(f"{n}'s K differs from {left}'s")
    rl, tl = frame(info[left])
    rr, tr = frame(info[right])
    rd, td = frame(info[depth])
    if not (np.allclose(rl, rr, atol=1e-9) and np.allclose(rl, rd, atol=1e-9) and np.allclose(tl, td, atol=1e-9)):
        sys.exit("the pair is not rectified or the depth camera is not at the left camera")
    offset = rl.T @ (tr - tl)  # the right camera in the left optical frame
    baseline = float(offset[0])
    if baseline <= 0 or abs(offset[1]) > 1e-9 or abs(offset[2]) > 1e-9:
        sys.exit(f"the right camera is at {offset} in the left optical frame, not on its +x axis")
    fx = float(K[0, 0])

    L = cv2.imread(f"{d}/{left}.png", cv2.IMREAD_GRAYSCALE)
    R = cv2.imread(f"{d}/{right}.png", cv2.IMREAD_GRAYSCALE)
    h, w = L.shape
    z = np.fromfile(f"{d}/{depth}.depth.f32", dtype="<f4").reshape(h, w).astype(np.float64)

    block = 5
    sgbm = cv2.StereoSGBM_create(
        minDisparity=0, numDisparities=128, blockSize=block,
        P1=8 * block * block, P2=32 * block * block, disp12MaxDiff=1,
        uniquenessRatio=10, speckleWindowSize=100, speckleRange=2,
        mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY)
    disp = sgbm.compute(L, R).astype(np.float64) / 16.0  # fixed point, 4 fractional bits

    # Far surfaces (beyond the depth camera's range) have disparity ~0.
    with np.errstate(divide="ignore"):
        truth = np.where(np.isfinite(z) & (z > 0), fx * baseline / z, 0.0)
    g = L.astype(np.float64)
    mean = cv2.blur(g, (5, 5))
    var = cv2.blur(g * g, (5, 5)) - mean * mean
    textured = np.sqrt(np.maximum(var, 0)) >= 4
    found = textured & (disp >= 0)
    good = found & (np.abs(disp - truth) <= 1.0)
    print(json.dumps({
        "baseline": baseline, "fx": fx,
        "textured": int(textured.sum()), "found": int(found.sum()), "within_1px": int(good.sum()),
        "fraction": float(good.sum()) / max(1, int(found.sum())),
    }))


main()
