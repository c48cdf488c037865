"""Back-project a simvis depth capture the standard pinhole way and measure
how far the points lie from a known plane.

An independent reader of simvis's published outputs: it uses only what a
user has, NAME.json (K and optical_pose, as documented in the sensors
package) and NAME.depth.f32, and numpy. Run with Debian's /usr/bin/python3
(python3-numpy).

usage: backproject.py BASE NX NY NZ C
  BASE        capture path without extension (BASE.json, BASE.depth.f32)
  NX NY NZ C  the plane n . p = C in world coordinates, n a unit vector

Prints JSON: for the published K and for K with the pixel-corner principal
point (cx = W/2 and/or cy = H/2), the number of valid pixels and the largest
and mean signed distance of their points from the plane, in meters.
"""

import json
import sys

import numpy as np


def rotation(roll, pitch, yaw):
    """R = Rz(yaw) Ry(pitch) Rx(roll), angles in degrees (URDF / ROS rpy)."""
    r, p, y = np.radians([roll, pitch, yaw])
    rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def main():
    base = sys.argv[1]
    n = np.array([float(a) for a in sys.argv[2:5]])
    c = float(sys.argv[5])
    with open(base + ".json") as f:
        info = json.load(f)
    w, h = info["width"], info["height"]
    K = np.array(info["K"], dtype=np.float64).reshape(3, 3)
    if info["distortion_model"] != "plumb_bob" or any(info["D"]):
        sys.exit("expected an undistorted plumb_bob camera, got %s %s" % (info["distortion_model"], info["D"]))
    depth = np.fromfile(base + ".depth.f32", dtype="<f4").reshape(h, w).astype(np.float64)
    valid = np.isfinite(depth)
    op = info["optical_pose"]
    R = rotation(op["roll"], op["pitch"], op["yaw"])
    t = np.array([op["x"], op["y"], op["z"]])

    v, u = np.mgrid[0:h, 0:w]
    pix = np.stack([u[valid], v[valid], np.ones(valid.sum())]).astype(np.float64)
    z = depth[valid]

    def distances(k):
        rays = np.linalg.solve(k, pix)  # K^-1 [u v 1]^T: z = 1 rays, optical frame
        pts = (R @ (rays * z)).T + t  # world
        d = pts @ n - c
        return {"valid": int(valid.sum()), "max_abs": float(np.abs(d).max()), "mean": float(d.mean())}

    out = {"published": distances(K)}
    for name, cx, cy in (("corner_cx", w / 2, K[1, 2]), ("corner_cy", K[0, 2], h / 2), ("corner", w / 2, h / 2)):
        k = K.copy()
        k[0, 2], k[1, 2] = cx, cy
        out[name] = distances(k)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
