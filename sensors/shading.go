package sensors

// Camera shading: g3n's standard material, drawn by a fragment shader of
// ours put in place of g3n's "standard_fragment". It is g3n's Phong model
// plus three things: shadows of the directional and spot lights that have
// a shadow map (shadows.go), the glTF alpha test (a material compiled with
// SIMVIS_ALPHA_CUTOFF discards what is below the cutoff and is opaque
// elsewhere), and no clamping at 1, so that float targets keep the linear
// radiance for exposure (exposure.go).
//
// The shadow code is compiled in only where the material has the define
// SIMVIS_SHADOWS (the number of maps; scene.Scene.SetShadowMaps): llvmpipe
// runs every branch of a shader whether taken or not, and shadow code
// present but unused made a frame 5 to 10 times as costly. Those are the
// model materials, which set the frame's shadow uniforms (matrices, light
// parameters) when drawn (scene.Scene.SetDrawHook); the atlas sits on
// texture unit shadowAtlasUnit, which the shader names with layout(binding)
// (ARB_shading_language_420pack).

const (
	shadowAtlasUnit = 14
	// maxShadowLights bounds the lights with a shadow map; further marked
	// lights light without shadows.
	maxShadowLights = 4
)

const litFragmentShader = `#extension GL_ARB_shading_language_420pack : require
precision highp float;

in vec4 Position;     // camera coordinates
in vec3 Normal;       // camera coordinates
in vec2 FragTexcoord;

#include <lights>
#include <material>

out vec4 FragColor;

#ifdef SIMVIS_SHADOWS
layout(binding = 14) uniform sampler2DShadow SimvisShadowAtlas;
// Per map: camera coordinates -> atlas (u, v across the atlas, window
// depth); (kind: 1 directional, 2 spot; near; far; texel size); the key
// that finds its light (direction toward a directional light, position of
// a spot light, camera coordinates).
uniform mat4 SimvisShadowMatrix[SIMVIS_SHADOWS];
uniform vec4 SimvisShadowInfo[SIMVIS_SHADOWS];
uniform vec3 SimvisShadowKey[SIMVIS_SHADOWS];

// lightSeen is the fraction of the light j reaching the fragment:
// percentage-closer filtering of its shadow map, four hardware-filtered
// comparisons (each 2x2 texels, bilinearly weighted) half a texel apart, a
// 3x3-texel tent, after a bias along the normal and in depth that grows
// with the texel's size on the surface.
float lightSeen(int j, vec3 pos, vec3 n, vec3 toLight) {
    mat4 m = SimvisShadowMatrix[j];
    vec4 info = SimvisShadowInfo[j];
    int kind = int(info.x);
    float near = info.y, far = info.z;
    float texel = kind == 1 ? info.w : info.w * max(distance(pos, SimvisShadowKey[j]), near);
    float c = clamp(dot(n, toLight), 0.1, 1.0);
    float tanT = sqrt(1.0 - c*c) / c;
    vec4 q = m * vec4(pos + n * texel, 1.0);
    if (q.w <= 0.0) return 1.0;
    vec3 p = q.xyz / q.w;
    float lin = kind == 1 ? near + p.z * (far - near) : q.w;
    lin -= texel * (1.0 + tanT);
    float ref = kind == 1 ? (lin - near) / (far - near) : far * (lin - near) / (lin * (far - near));
    vec2 size = vec2(textureSize(SimvisShadowAtlas, 0));
    // The light's square of the atlas, in texels, less the filter's reach.
    float lo = float(j) * size.y, hi = lo + size.y;
    vec2 t = p.xy * size;
    if (t.x < lo || t.x > hi || t.y < 0.0 || t.y > size.y) return 1.0;
    t = clamp(t, vec2(lo + 1.0, 1.0), vec2(hi - 1.0, size.y - 1.0));
    float lit = 0.0;
    for (int k = 0; k < 4; k++) {
        vec2 o = vec2(k == 0 || k == 2 ? -0.5 : 0.5, k < 2 ? -0.5 : 0.5);
        lit += texture(SimvisShadowAtlas, vec3((t + o) / size, ref));
    }
    return lit / 4.0;
}

// shadowed returns the fraction of the light of this kind (1 directional,
// 2 spot) with this key reaching the fragment: lightSeen of the map whose
// key matches, 1 without one. The loop has a constant bound, so the
// compiler unrolls it and every map's uniforms are read at constant
// indices (a dynamic index made llvmpipe gather them per pixel).
float shadowed(int kind, vec3 key, vec3 pos, vec3 n, vec3 toLight) {
    float seen = 1.0;
    for (int j = 0; j < SIMVIS_SHADOWS; j++) {
        vec3 k = SimvisShadowKey[j];
        bool match = kind == 1 ? dot(k, normalize(key)) > 0.99999 : distance(k, key) < 1e-3;
        if (int(SimvisShadowInfo[j].x) == kind && match) {
            seen = lightSeen(j, pos, n, toLight);
        }
    }
    return seen;
}
#endif

void main() {
    vec4 texMixed = vec4(1);
#if MAT_TEXTURES > 0
    bool firstTex = true;
    if (MatTexVisible(0)) {
        texMixed = texture(MatTexture[0], FragTexcoord * MatTexRepeat(0) + MatTexOffset(0));
        firstTex = false;
    }
#if MAT_TEXTURES > 1
    if (MatTexVisible(1)) {
        vec4 texColor = texture(MatTexture[1], FragTexcoord * MatTexRepeat(1) + MatTexOffset(1));
        texMixed = firstTex ? texColor : Blend(texMixed, texColor);
        firstTex = false;
    }
#if MAT_TEXTURES > 2
    if (MatTexVisible(2)) {
        vec4 texColor = texture(MatTexture[2], FragTexcoord * MatTexRepeat(2) + MatTexOffset(2));
        texMixed = firstTex ? texColor : Blend(texMixed, texColor);
    }
#endif
#endif
#endif
    vec4 matDiffuse = vec4(MatDiffuseColor, MatOpacity) * texMixed;
    vec4 matAmbient = vec4(MatAmbientColor, MatOpacity) * texMixed;
#ifdef SIMVIS_ALPHA_CUTOFF
    if (matDiffuse.a < float(SIMVIS_ALPHA_CUTOFF)) discard;
    matDiffuse.a = 1.0;
#endif

    vec3 normal = normalize(Normal);
    vec3 camDir = normalize(-Position.xyz);
    vec3 fdx = dFdx(Position.xyz);
    vec3 fdy = dFdy(Position.xyz);
    vec3 faceNormal = normalize(cross(fdx, fdy));
    if (dot(normal, faceNormal) < 0.0) {
        normal = -normal; // back face
    }
    vec3 pos = Position.xyz;

    vec3 ambientTotal = vec3(0.0);
    vec3 diffuseTotal = vec3(0.0);
    vec3 specularTotal = vec3(0.0);
    bool noLights = true;
    const float EPS = 0.00001;
#if AMB_LIGHTS > 0
    noLights = false;
    for (int i = 0; i < AMB_LIGHTS; ++i) {
        ambientTotal += AmbientLightColor[i] * matAmbient.rgb;
    }
#endif
#if DIR_LIGHTS > 0
    noLights = false;
    for (int i = 0; i < DIR_LIGHTS; ++i) {
        vec3 l = normalize(DirLightPosition(i));
        float dotNormal = dot(l, normal);
        if (dotNormal > EPS) {
            float seen = 1.0;
#ifdef SIMVIS_SHADOWS
            seen = shadowed(1, l, pos, normal, l);
#endif
            diffuseTotal += seen * DirLightColor(i) * matDiffuse.rgb * dotNormal;
            specularTotal += seen * DirLightColor(i) * MatSpecularColor * pow(max(dot(reflect(-l, normal), camDir), 0.0), MatShininess);
        }
    }
#endif
#if POINT_LIGHTS > 0
    noLights = false;
    for (int i = 0; i < POINT_LIGHTS; ++i) {
        vec3 l = PointLightPosition(i) - pos;
        float dist = length(l);
        l = l / dist;
        float dotNormal = dot(l, normal);
        if (dotNormal > EPS) {
            float att = 1.0 / (1.0 + dist * (PointLightLinearDecay(i) + PointLightQuadraticDecay(i) * dist));
            vec3 col = PointLightColor(i) * att;
            diffuseTotal += col * matDiffuse.rgb * dotNormal;
            specularTotal += col * MatSpecularColor * pow(max(dot(reflect(-l, normal), camDir), 0.0), MatShininess);
        }
    }
#endif
#if SPOT_LIGHTS > 0
    noLights = false;
    for (int i = 0; i < SPOT_LIGHTS; ++i) {
        vec3 l = SpotLightPosition(i) - pos;
        float dist = length(l);
        l = l / dist;
        float angleDot = dot(-l, SpotLightDirection(i));
        float angle = acos(angleDot);
        float cutoff = radians(clamp(SpotLightCutoffAngle(i), 0.0, 90.0));
        if (angle < cutoff) {
            float dotNormal = dot(l, normal);
            if (dotNormal > EPS) {
                float att = 1.0 / (1.0 + dist * (SpotLightLinearDecay(i) + SpotLightQuadraticDecay(i) * dist));
                float seen = 1.0;
#ifdef SIMVIS_SHADOWS
                seen = shadowed(2, SpotLightPosition(i), pos, normal, l);
#endif
                vec3 col = seen * SpotLightColor(i) * att * pow(angleDot, SpotLightAngularDecay(i));
                diffuseTotal += col * matDiffuse.rgb * dotNormal;
                specularTotal += col * MatSpecularColor * pow(max(dot(reflect(-l, normal), camDir), 0.0), MatShininess);
            }
        }
    }
#endif
    if (noLights) {
        diffuseTotal = matDiffuse.rgb;
    }
    // Not clamped: float targets keep radiance above 1 for exposure;
    // 8-bit targets clamp as they store.
    FragColor = vec4(ambientTotal + MatEmissiveColor + diffuseTotal + specularTotal, matDiffuse.a);
}
`

// shadowVertexShader and shadowFragmentShader draw depth only, for the
// shadow maps.
// A masked caster (ShadowCutoff > 0) is cut where its texture's alpha is
// below the cutoff, as the camera's alpha test cuts it.
const shadowVertexShader = `layout(location = 0) in vec3 VertexPosition;
layout(location = 1) in vec2 VertexTexcoord;
uniform mat4 ShadowMVP;
out vec2 uv;
void main() {
    uv = VertexTexcoord;
    gl_Position = ShadowMVP * vec4(VertexPosition, 1.0);
}
`

const shadowFragmentShader = `in vec2 uv;
uniform sampler2D ShadowAlpha;
uniform float ShadowCutoff;
void main() {
    if (ShadowCutoff > 0.0 && texture(ShadowAlpha, uv).r < ShadowCutoff) discard;
}
`
