# meshstats.py: import mesh files with Blender's own importers and print,
# for each, the triangle count and the world-space axis-aligned bounds of
# its mesh vertices: the independent reader models/blender_test.go compares
# simvis's STL, OBJ and Collada readers with.
#
#   blender --background --factory-startup --python-exit-code 1 \
#       --python internal/blendertest/meshstats.py -- FILE...
#
# One line per file on stdout, "meshstats: " and a JSON object:
#   {"file": F, "triangles": N, "min": [x, y, z], "max": [x, y, z]}
# or {"file": F, "error": "..."} where Blender could not import it. One
# Blender process reads every file (a start costs about 2 s), the scene
# emptied between files.
#
# Frames: simvis reads STL and OBJ as written (meters, z up, as ROS tools
# do), so their importers get axis_forward="Y", axis_up="Z", Blender's own
# z-up frame, which turns nothing (the OBJ importer's default, -Z forward and
# Y up, would rotate y-up files to z-up). Collada keeps Blender's defaults:
# <unit> and <up_axis> are applied to the imported objects
# (import_units=False scales to Blender's meters), which is what simvis
# claims to do.
import json
import math
import os
import sys

import bpy


def clear():
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o, do_unlink=True)
    for m in list(bpy.data.meshes):
        bpy.data.meshes.remove(m)


def import_file(path):
    ext = os.path.splitext(path)[1].lower()
    if ext == ".stl":
        r = bpy.ops.import_mesh.stl(filepath=path, axis_forward="Y", axis_up="Z", global_scale=1.0,
                                    use_scene_unit=False)
    elif ext == ".obj":
        # split_mode ON (one object per o/g): each object keeps only the
        # vertices its faces use, as simvis builds only triangles' corners.
        r = bpy.ops.import_scene.obj(filepath=path, axis_forward="Y", axis_up="Z", split_mode="ON",
                                     global_clamp_size=0.0)
    elif ext == ".dae":
        r = bpy.ops.wm.collada_import(filepath=path, import_units=False, fix_orientation=False)
    else:
        raise ValueError("no importer for " + ext)
    if "FINISHED" not in r:
        raise RuntimeError("importer returned %s" % sorted(r))


def stats(path):
    tris = 0
    lo = [math.inf] * 3
    hi = [-math.inf] * 3
    for ob in bpy.context.scene.objects:
        if ob.type != "MESH":
            continue
        me = ob.data
        # loop_triangles triangulates n-gons (n-2 each) without changing
        # the mesh, so quads and polygons count as simvis's fans do.
        me.calc_loop_triangles()
        tris += len(me.loop_triangles)
        # The world matrix in Python floats (double), applied only to the
        # vertices some triangle uses.
        mw = [[ob.matrix_world[i][j] for j in range(4)] for i in range(3)]
        used = set()
        for lt in me.loop_triangles:
            used.update(lt.vertices)
        for i in used:
            co = me.vertices[i].co
            v = (co[0], co[1], co[2], 1.0)
            for k in range(3):
                w = sum(mw[k][j] * v[j] for j in range(4))
                lo[k] = min(lo[k], w)
                hi[k] = max(hi[k], w)
    return {"file": path, "triangles": tris, "min": lo, "max": hi}


def main():
    argv = sys.argv
    files = argv[argv.index("--") + 1:] if "--" in argv else []
    if not files:
        sys.exit("meshstats.py: no files (give them after --)")
    for path in files:
        clear()
        try:
            import_file(path)
            out = stats(path)
        except Exception as e:  # reported per file, so one bad file names itself
            out = {"file": path, "error": "%s: %s" % (type(e).__name__, e)}
        print("meshstats: " + json.dumps(out), flush=True)


main()
