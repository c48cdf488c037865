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
// Per map: the fragment's biased place in it (atlas u, v, window depth,
// before the division by w; litVertexShader).
in vec4 SimvisShadowCoord[SIMVIS_SHADOWS];

// lightSeen is the fraction of the light j reaching the fragment:
// percentage-closer filtering of its shadow map, four hardware-filtered
// comparisons (each 2x2 texels, bilinearly weighted) half a texel apart, a
// 3x3-texel tent, at the fragment's biased place in the map (computed per
// vertex, see litVertexShader).
float lightSeen(int j) {
    vec4 q = SimvisShadowCoord[j];
    if (q.w <= 0.0) return 1.0;
    vec3 p = q.xyz / q.w;
    vec2 size = vec2(textureSize(SimvisShadowAtlas, 0));
    // The light's square of the atlas, in texels, less the filter's reach.
    float lo = float(j) * size.y, hi = lo + size.y;
    vec2 t = p.xy * size;
    if (t.x < lo || t.x > hi || t.y < 0.0 || t.y > size.y) return 1.0;
    t = clamp(t, vec2(lo + 1.0, 1.0), vec2(hi - 1.0, size.y - 1.0));
    float lit = 0.0;
    for (int k = 0; k < 4; k++) {
        vec2 o = vec2(k == 0 || k == 2 ? -0.5 : 0.5, k < 2 ? -0.5 : 0.5);
        lit += texture(SimvisShadowAtlas, vec3((t + o) / size, p.z));
    }
    return lit / 4.0;
}

// The map of each directional and spot light, by g3n's numbering (-1
// none): constant, so the unrolled light loops read each map at a
// constant index and skip lights without one at compile time.
#if DIR_LIGHTS > 0
const int SimvisDirSlot[DIR_LIGHTS] = int[DIR_LIGHTS](SIMVIS_DIR_SLOTS);
#endif
#if SPOT_LIGHTS > 0
const int SimvisSpotSlot[SPOT_LIGHTS] = int[SPOT_LIGHTS](SIMVIS_SPOT_SLOTS);
#endif
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
            if (SimvisDirSlot[i] >= 0) seen = lightSeen(SimvisDirSlot[i]);
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
                if (SimvisSpotSlot[i] >= 0) seen = lightSeen(SimvisSpotSlot[i]);
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

// litVertexShader is g3n's standard vertex shader plus, with
// SIMVIS_SHADOWS, each fragment's place in every shadow map
// (SimvisShadowCoord: atlas u, v, window depth, before the division by
// w), biased per vertex against self-shadowing: moved along the normal
// (turned toward the light) by a texel's size on the surface and toward the
// light by a texel times 1 + tan(angle of incidence), so that a surface
// never shades itself however the map's texels fall on it.
const litVertexShader = `#include <attributes>

uniform mat4 ModelViewMatrix;
uniform mat3 NormalMatrix;
uniform mat4 MVP;

#include <material>
#include <morphtarget_vertex_declaration>
#include <bones_vertex_declaration>

out vec4 Position;
out vec3 Normal;
out vec2 FragTexcoord;

#ifdef SIMVIS_SHADOWS
// Per map: camera coordinates -> atlas; (kind: 1 directional, 2 spot;
// near; far; texel size: meters, or meters per meter of distance); the key
// (direction toward a directional light, position of a spot light, camera
// coordinates).
uniform mat4 SimvisShadowMatrix[SIMVIS_SHADOWS];
uniform vec4 SimvisShadowInfo[SIMVIS_SHADOWS];
uniform vec3 SimvisShadowKey[SIMVIS_SHADOWS];
out vec4 SimvisShadowCoord[SIMVIS_SHADOWS];
#endif

void main() {
    Position = ModelViewMatrix * vec4(VertexPosition, 1.0);
    Normal = normalize(NormalMatrix * VertexNormal);
    vec2 texcoord = VertexTexcoord;
#if MAT_TEXTURES > 0
    if (MatTexFlipY(0)) {
        texcoord.y = 1.0 - texcoord.y;
    }
#endif
    FragTexcoord = texcoord;
    vec3 vPosition = VertexPosition;
    mat4 finalWorld = mat4(1.0);
    #include <morphtarget_vertex>
    #include <bones_vertex>
    gl_Position = MVP * finalWorld * vec4(vPosition, 1.0);
#ifdef SIMVIS_SHADOWS
    for (int j = 0; j < SIMVIS_SHADOWS; j++) {
        vec4 info = SimvisShadowInfo[j];
        vec3 key = SimvisShadowKey[j];
        vec3 toLight = info.x < 1.5 ? key : key - Position.xyz;
        float dist = max(length(toLight), 1e-9);
        toLight /= dist;
        float texel = info.x < 1.5 ? info.w : info.w * max(dist, info.y);
        vec3 n = dot(Normal, toLight) < 0.0 ? -Normal : Normal;
        float c = clamp(dot(n, toLight), 0.1, 1.0);
        float tanT = sqrt(1.0 - c*c) / c;
        SimvisShadowCoord[j] = SimvisShadowMatrix[j] * vec4(Position.xyz + n * texel + toLight * texel * (1.0 + tanT), 1.0);
    }
#endif
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
