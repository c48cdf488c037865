"""Back-project a simvis depth capture through its lens with OpenCV and
measure how far the points lie from a known plane.

An independent reader of simvis's published outputs: it uses only NAME.json
(K, D, distortion_model and optical_pose) and NAME.depth.f32, with OpenCV's
own inverse of the lens model (cv2.undistortPointsIter for plumb_bob,
cv2.fisheye.undistortPoints for equidistant, iterated to 1e-12) and numpy.
Run with Debian's /usr/bin/python3 (python3-opencv).

usage: backproject_lens.py BASE NX NY NZ C
  BASE        capture path without extension (BASE.json, BASE.depth.f32)
  NX NY NZ C  the plane n . p = C in world coordinates, n a unit vector

Prints JSON: the number of valid pixels and the largest distance of their
points from the plane in meters, through the lens ("lens") and ignoring it
("pinhole", what a reader that drops D would get).
"""

import json
import sys

import cv2
import numpy as np

# The pinhole back-projection's script, beside this one.
from backproject import rotation


def main():
    base = sys.argv[1]
    n = np.array([float(a) for a in sys.argv[2:5]])
    c = float(sys.argv[5])
    with open(base + ".json") as f:
        info = json.load(f)
    w, h = info["width"], info["height"]
    K = np.array(info["K"], dtype=np.float64).reshape(3, 3)
    D = np.array(info["D"], dtype=np.float64)
    depth = np.fromfile(base + ".depth.f32", dtype="<f4").reshape(h, w).astype(np.float64)
    valid = np.isfinite(depth)
    op = info["optical_pose"]
    R = rotation(op["roll"], op["pitch"], op["yaw"])
    t = np.array([op["x"], op["y"], op["z"]])

    v, u = np.mgrid[0:h, 0:w]
    pix = np.stack([u[valid], v[valid]], axis=-1).astype(np.float64).reshape(-1, 1, 2)
    z = depth[valid]
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 200, 1e-12)
    if info["distortion_model"] == "equidistant":
        xy = cv2.fisheye.undistortPoints(pix, K, D.reshape(1, 4), criteria=crit)
    elif info["distortion_model"] == "plumb_bob":
        xy = cv2.undistortPointsIter(pix, K, D.reshape(1, -1), None, None, crit)
    else:
        sys.exit("unknown distortion_model %r" % info["distortion_model"])
    xy = xy.reshape(-1, 2)

    def worst(rays_xy):
        rays = np.column_stack([rays_xy, np.ones(len(z))])
        pts = (R @ (rays * z[:, None]).T).T + t
        return float(np.abs(pts @ n - c).max())

    pinhole = np.linalg.solve(K, np.vstack([pix.reshape(-1, 2).T, np.ones(len(z))]))[:2].T
    json.dump({"valid": int(valid.sum()), "lens": worst(xy), "pinhole": worst(pinhole)}, sys.stdout)


if __name__ == "__main__":
    main()
