/* embree_peer: casts the rays of a simvis ray file (see ../doc.go) with
 * Intel Embree on one thread, writes their ranges and prints timings as one
 * JSON line. Written for simvis's peer benchmark (make bench-peers).
 *
 *   embree_peer RAYFILE RANGEFILE SECONDS
 *
 * Each way of casting (rtcIntersect1, and packets of 4 and 8 with
 * rtcIntersect4/8) runs over all rays for at least SECONDS; the ranges
 * written are those of rtcIntersect1 (+Inf where nothing is hit). */
#include <embree3/rtcore.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *msg) {
	fprintf(stderr, "embree_peer: %s\n", msg);
	exit(1);
}

static void readn(FILE *f, void *p, size_t size, size_t n, const char *what) {
	if (fread(p, size, n, f) != n) {
		fprintf(stderr, "embree_peer: short read in %s\n", what);
		exit(1);
	}
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The rays: origins and unit directions, float64 in the file, float32 for
 * Embree (its rays are float32). */
static uint32_t nrays;
static float *ray; /* 6 per ray */

static void cast1(RTCScene scene, double *out) {
	struct RTCIntersectContext ctx;
	rtcInitIntersectContext(&ctx);
	for (uint32_t i = 0; i < nrays; i++) {
		struct RTCRayHit rh;
		const float *r = ray + 6 * (size_t)i;
		rh.ray.org_x = r[0], rh.ray.org_y = r[1], rh.ray.org_z = r[2];
		rh.ray.dir_x = r[3], rh.ray.dir_y = r[4], rh.ray.dir_z = r[5];
		rh.ray.tnear = 0, rh.ray.tfar = INFINITY, rh.ray.time = 0;
		rh.ray.mask = 0xFFFFFFFF, rh.ray.id = i, rh.ray.flags = 0;
		rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
		rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
		rtcIntersect1(scene, &ctx, &rh);
		if (out)
			out[i] = rh.hit.geomID == RTC_INVALID_GEOMETRY_ID ? INFINITY : rh.ray.tfar;
	}
}

/* castN casts packets of N consecutive rays (neighbouring beams: coherent). */
#define CASTN(N)                                                                   \
	static double cast##N(RTCScene scene) {                                        \
		struct RTCIntersectContext ctx;                                            \
		rtcInitIntersectContext(&ctx);                                             \
		double sum = 0;                                                            \
		for (uint32_t i = 0; i < nrays; i += N) {                                  \
			struct RTCRayHit##N rh __attribute__((aligned(64)));                   \
			int valid[N] __attribute__((aligned(64)));                             \
			for (int k = 0; k < N; k++) {                                          \
				uint32_t j = i + k < nrays ? i + k : nrays - 1;                    \
				const float *r = ray + 6 * (size_t)j;                              \
				valid[k] = i + k < nrays ? -1 : 0;                                 \
				rh.ray.org_x[k] = r[0], rh.ray.org_y[k] = r[1], rh.ray.org_z[k] = r[2]; \
				rh.ray.dir_x[k] = r[3], rh.ray.dir_y[k] = r[4], rh.ray.dir_z[k] = r[5]; \
				rh.ray.tnear[k] = 0, rh.ray.tfar[k] = INFINITY, rh.ray.time[k] = 0; \
				rh.ray.mask[k] = 0xFFFFFFFF, rh.ray.id[k] = j, rh.ray.flags[k] = 0; \
				rh.hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;                        \
				rh.hit.instID[0][k] = RTC_INVALID_GEOMETRY_ID;                     \
			}                                                                      \
			rtcIntersect##N(valid, scene, &ctx, &rh);                              \
			for (int k = 0; k < N; k++)                                            \
				if (valid[k] && rh.hit.geomID[k] != RTC_INVALID_GEOMETRY_ID)       \
					sum += rh.ray.tfar[k];                                         \
		}                                                                          \
		return sum;                                                                \
	}
CASTN(4)
CASTN(8)

int main(int argc, char **argv) {
	if (argc != 4)
		die("usage: embree_peer RAYFILE RANGEFILE SECONDS");
	double seconds = atof(argv[3]);
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		die("cannot open the ray file");
	char magic[8];
	readn(f, magic, 1, 8, "header");
	if (memcmp(magic, "SVRAYS01", 8) != 0)
		die("not a simvis ray file (magic SVRAYS01)");
	uint32_t hdr[3];
	readn(f, hdr, 4, 3, "header");
	uint32_t nverts = hdr[0], ntris = hdr[1];
	nrays = hdr[2];
	if (nverts > (1u << 26) || ntris > (1u << 26) || nrays > (1u << 26))
		die("counts beyond 2^26");

	RTCDevice dev = rtcNewDevice("threads=1");
	if (!dev)
		die("rtcNewDevice failed");
	RTCScene scene = rtcNewScene(dev);
	rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_HIGH);
	RTCGeometry geom = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
	float *v = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), nverts);
	uint32_t *ix = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), ntris);
	readn(f, v, 4, 3 * (size_t)nverts, "vertices");
	readn(f, ix, 4, 3 * (size_t)ntris, "indices");
	for (size_t i = 0; i < 3 * (size_t)ntris; i++)
		if (ix[i] >= nverts)
			die("index out of range");
	rtcCommitGeometry(geom);
	rtcAttachGeometry(scene, geom);
	rtcReleaseGeometry(geom);
	double t0 = now();
	rtcCommitScene(scene);
	double build = now() - t0;

	ray = malloc(6 * sizeof(float) * (size_t)nrays + 1);
	double *out = malloc(sizeof(double) * (size_t)nrays + 1);
	if (!ray || !out)
		die("out of memory");
	for (uint32_t i = 0; i < nrays; i++) {
		double r[6];
		readn(f, r, 8, 6, "rays");
		for (int k = 0; k < 6; k++)
			ray[6 * (size_t)i + k] = (float)r[k];
	}
	fclose(f);

	cast1(scene, out); /* warm-up, and the ranges */
	double rate[3];
	volatile double sink = 0;
	for (int w = 0; w < 3; w++) {
		long n = 0;
		t0 = now();
		do {
			switch (w) {
			case 0: cast1(scene, NULL); break;
			case 1: sink += cast4(scene); break;
			case 2: sink += cast8(scene); break;
			}
			n++;
		} while (now() - t0 < seconds);
		rate[w] = (double)n * nrays / (now() - t0);
	}
	FILE *o = fopen(argv[2], "wb");
	if (!o || fwrite(out, sizeof(double), nrays, o) != nrays || fclose(o) != 0)
		die("cannot write the ranges");
	printf("{\"embree\":\"%s\",\"build_s\":%.6f,\"rays\":%u,\"intersect1_rays_per_s\":%.1f,"
	       "\"intersect4_rays_per_s\":%.1f,\"intersect8_rays_per_s\":%.1f}\n",
	       RTC_VERSION_STRING, build, nrays, rate[0], rate[1], rate[2]);
	rtcReleaseScene(scene);
	rtcReleaseDevice(dev);
	return 0;
}
