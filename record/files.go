package record

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// maxModelDepth bounds models that embed commands naming other models.
const maxModelDepth = 16

// modelFiles lists the files a command loads, relative to its directory
// (slash-separated): the model its file attribute names, a .gltf's external
// buffers and images, every file a model of another format read
// (models.Model.Files: a URDF's meshes and the package.xml of its own
// package, an OBJ's MTL), and the files of commands embedded in the model,
// recursively. A confined command's files (a request's) must lie in its
// directory; a command of the scene file the user started may name files
// anywhere (paths with "..", which the recording's base directory then
// encloses: see Writer.Cycle); the scene checked what its models embed.
func modelFiles(c *scene.Command, limits models.Limits, packagePath []string) ([]string, error) {
	confined := c.Confined
	file := c.Elem.SelectAttrValue("file", "")
	if file == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		rel = path.Clean(rel)
		if seen[rel] {
			return nil
		}
		if depth > maxModelDepth {
			return fmt.Errorf("models embedded more than %d deep at %s", maxModelDepth, rel)
		}
		if confined && !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("model file %q is outside the command's directory %s", rel, c.Dir)
		}
		seen[rel] = true
		out = append(out, rel)
		full := filepath.Join(c.Dir, filepath.FromSlash(rel))
		base := path.Dir(rel)
		if strings.HasSuffix(strings.ToLower(rel), ".gltf") {
			data, err := models.ReadRegular(full, limits.FileBytes)
			if err != nil {
				return err
			}
			for _, u := range models.ExternalURIs(data) {
				p, ok, err := models.FileURI(u)
				if err != nil {
					return fmt.Errorf("%s: %w", rel, err)
				}
				r := path.Join(base, p)
				if ok && confined && !filepath.IsLocal(filepath.FromSlash(r)) {
					return fmt.Errorf("%s: uri %q is outside the command's directory %s", rel, u, c.Dir)
				}
				if ok && !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
			}
		}
		root := c.Dir
		if !confined {
			root = ""
		}
		m, err := models.LoadWith(full, models.LoadOptions{Root: root, Limits: limits, PackagePath: packagePath})
		if err != nil {
			return err
		}
		if ext := strings.ToLower(path.Ext(rel)); ext != ".gltf" && ext != ".glb" {
			// Another format (URDF, OBJ, Collada...): every file its load
			// read (a URDF's meshes, their materials, the package.xml of
			// its own package), relative to the command's directory.
			dir, err := filepath.EvalSymlinks(c.Dir)
			if err != nil {
				return err
			}
			dir, err = filepath.Abs(dir)
			if err != nil {
				return err
			}
			for _, f := range m.Files() {
				r, err := filepath.Rel(dir, f)
				if err != nil {
					return fmt.Errorf("%s: file %s: %w", rel, f, err)
				}
				r = filepath.ToSlash(r)
				if confined && !filepath.IsLocal(filepath.FromSlash(r)) {
					return fmt.Errorf("%s: file %s is outside the command's directory %s", rel, f, c.Dir)
				}
				if !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
			}
		}
		for _, ec := range m.Commands {
			cmd, err := scene.ParseCommand(ec.XML, rel, "")
			if err != nil {
				continue // the scene refused it too
			}
			if f := cmd.Elem.SelectAttrValue("file", ""); f != "" {
				if err := walk(path.Join(base, filepath.ToSlash(f)), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(filepath.ToSlash(file), 0)
}
