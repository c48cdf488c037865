"""Calibrate a camera from checkerboard images with OpenCV, as a user would.

An independent reader of simvis's camera images: it knows only the board
(inner corners and square size) and the PNGs, and runs OpenCV's
findChessboardCorners, cornerSubPix and calibrateCamera with the five
coefficients k1 k2 p1 p2 k3, k3 held at zero (CALIB_FIX_K3) unless
--free-k3 is given: over a board's radii k2 r^4 and k3 r^6 nearly
coincide, so with k3 free k2 trades against it (on the sensors test's
images calibrateCameraExtended gave k2 a standard deviation of 0.0047,
9 % of 0.05, and k2 = 0.037 with k3 free; 0.0009 and k2 = 0.0486 with k3
fixed). Run with Debian's
/usr/bin/python3 (python3-opencv).

usage: calibrate.py [--free-k3] COLS ROWS SQUARE PNG...
  COLS ROWS  inner corners per row and per column
  SQUARE     square size in meters

Prints JSON: images (given), used (board found), rms (reprojection error,
pixels), fx, fy, cx, cy, D (k1 k2 p1 p2 k3) and std (their standard
deviations, in the same order, from calibrateCameraExtended).
"""

import json
import sys

import cv2
import numpy as np


def main():
    args = sys.argv[1:]
    flags = cv2.CALIB_FIX_K3
    if args and args[0] == "--free-k3":
        flags, args = 0, args[1:]
    cols, rows, square = int(args[0]), int(args[1]), float(args[2])
    files = args[3:]
    board = np.zeros((rows * cols, 3), np.float32)
    board[:, :2] = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2) * square
    obj, img, size = [], [], None
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 100, 1e-4)
    for f in files:
        gray = cv2.imread(f, cv2.IMREAD_GRAYSCALE)
        if gray is None:
            sys.exit("cannot read " + f)
        size = gray.shape[::-1]
        found, corners = cv2.findChessboardCorners(gray, (cols, rows), None)
        if not found:
            continue
        corners = cv2.cornerSubPix(gray, corners, (5, 5), (-1, -1), criteria)
        obj.append(board)
        img.append(corners)
    out = {"images": len(files), "used": len(img)}
    if len(img) >= 3:
        rms, k, d, _, _, std, _, _ = cv2.calibrateCameraExtended(obj, img, size, None, None, flags=flags)
        out.update(rms=rms, fx=k[0, 0], fy=k[1, 1], cx=k[0, 2], cy=k[1, 2], D=d.ravel()[:5].tolist(),
                   std=std.ravel()[:9].tolist())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
