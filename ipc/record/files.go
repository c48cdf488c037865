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
// buffers and images, and the files of commands embedded in the model,
// recursively. A confined command's files (a request's) must lie in its
// directory; a command of the scene file the user started may name files
// anywhere (paths with "..", which the recording's base directory then
// encloses: see Writer.Cycle); the scene checked what its models embed.
func modelFiles(c *scene.Command, limits models.Limits) ([]string, error) {
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
		m, err := models.LoadWith(full, models.LoadOptions{Root: root, Limits: limits})
		if err != nil {
			return err
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
