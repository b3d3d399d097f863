package release

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/mod/sumdb/dirhash"
)

// Layout is the shape of a provider mirror.
type Layout string

// The layouts Terraform and OpenTofu install from.
const (
	// Packed is a filesystem mirror of the release zips:
	// HOST/bkiam/bkiam/terraform-provider-bkiam_1.2.3_linux_amd64.zip.
	Packed Layout = "packed"
	// Unpacked is a filesystem mirror of the zips' contents:
	// HOST/bkiam/bkiam/1.2.3/linux_amd64/terraform-provider-bkiam_v1.2.3.
	Unpacked Layout = "unpacked"
	// Network is the static form of the provider network mirror protocol:
	// HOST/bkiam/bkiam/index.json, HOST/bkiam/bkiam/1.2.3.json and the
	// zips beside them, for any HTTPS file server.
	Network Layout = "network"
)

// DefaultHostnames are the registries the source address bkiam/bkiam
// means: Terraform reads it as registry.terraform.io/bkiam/bkiam, OpenTofu
// as registry.opentofu.org/bkiam/bkiam. A mirror holding both serves
// either CLI.
var DefaultHostnames = []string{"registry.terraform.io", "registry.opentofu.org"}

// MirrorOptions say what Mirror lays out.
type MirrorOptions struct {
	// Dist holds the release (Build's Out): the zips and their SHA256SUMS.
	Dist string
	// Dir is the mirror's root; what it already holds is kept, so that
	// the releases of several versions add up to one mirror.
	Dir       string
	Layout    Layout
	Hostnames []string // empty means DefaultHostnames
}

var archiveRE = regexp.MustCompile(`^` + Name + `_([^_]+)_([a-z0-9]+_[a-z0-9]+)\.zip$`)

// Archive is one release zip found in a directory.
type Archive struct {
	Version, Platform, Path string
}

// Archives lists the release zips in dir.
func Archives(dir string) ([]Archive, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var as []Archive
	for _, e := range entries {
		if m := archiveRE.FindStringSubmatch(e.Name()); m != nil && e.Type().IsRegular() {
			as = append(as, Archive{Version: m[1], Platform: m[2], Path: filepath.Join(dir, e.Name())})
		}
	}
	return as, nil
}

// Mirror lays the release in opts.Dist out as a mirror in opts.Dir, after
// checking every zip against its version's SHA256SUMS.
func Mirror(opts MirrorOptions) error {
	hosts := opts.Hostnames
	if len(hosts) == 0 {
		hosts = DefaultHostnames
	}
	archives, err := Archives(opts.Dist)
	if err != nil {
		return err
	}
	if len(archives) == 0 {
		return fmt.Errorf("%s holds no %s_VERSION_OS_ARCH.zip: run make release VERSION=… first", opts.Dist, Name)
	}
	sums := map[string]map[string]string{}
	for _, a := range archives {
		if sums[a.Version] == nil {
			s, err := ReadSums(filepath.Join(opts.Dist, SumsName(a.Version)))
			if err != nil {
				return fmt.Errorf("the checksums of version %s: %w (a mirror is built from a whole release: make release VERSION=%s)", a.Version, err, a.Version)
			}
			sums[a.Version] = s
		}
		got, err := FileSHA256(a.Path)
		if err != nil {
			return err
		}
		if want := sums[a.Version][filepath.Base(a.Path)]; got != want {
			return fmt.Errorf("%s has SHA-256 %s, but %s says %q: rebuild the release", a.Path, got, SumsName(a.Version), want)
		}
	}
	for _, host := range hosts {
		dir := filepath.Join(opts.Dir, host, "bkiam", "bkiam")
		if err := mkdirPublic(dir); err != nil {
			return err
		}
		for _, a := range archives {
			switch opts.Layout {
			case Packed, Network:
				err = copyFile(a.Path, filepath.Join(dir, filepath.Base(a.Path)))
			case Unpacked:
				err = unzip(a.Path, filepath.Join(dir, a.Version, a.Platform))
			default:
				return fmt.Errorf("layout %q: choose packed, unpacked or network", opts.Layout)
			}
			if err != nil {
				return err
			}
		}
		if opts.Layout == Network {
			if err := writeNetworkIndex(dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeNetworkIndex writes index.json and one VERSION.json per version
// for the zips in dir, those of earlier runs included. Each archive's url
// is relative to VERSION.json, so the mirror can be served from any base
// URL, and its hash is the zh: one (the zip's SHA-256), which the CLIs
// check the download against.
func writeNetworkIndex(dir string) error {
	archives, err := Archives(dir)
	if err != nil {
		return err
	}
	type archive struct {
		URL    string   `json:"url"`
		Hashes []string `json:"hashes"`
	}
	byVersion := map[string]map[string]archive{}
	for _, a := range archives {
		sum, err := FileSHA256(a.Path)
		if err != nil {
			return err
		}
		if byVersion[a.Version] == nil {
			byVersion[a.Version] = map[string]archive{}
		}
		byVersion[a.Version][a.Platform] = archive{URL: filepath.Base(a.Path), Hashes: []string{"zh:" + sum}}
	}
	index := map[string]map[string]struct{}{"versions": {}}
	for v, as := range byVersion {
		index["versions"][v] = struct{}{}
		if err := writeJSON(filepath.Join(dir, v+".json"), map[string]any{"archives": as}); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, "index.json"), index)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writePublic(path, append(data, '\n'))
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writePublic(to, data)
}

// unzip extracts a release zip into dir, keeping the executable bit.
func unzip(path, dir string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := mkdirPublic(dir); err != nil {
		return err
	}
	for _, f := range zr.File {
		// A release zip holds one flat file; refuse anything that would
		// land outside dir.
		if f.Name != filepath.Base(f.Name) || f.Name == ".." || f.FileInfo().IsDir() {
			return fmt.Errorf("%s: unexpected entry %q, not a release archive", path, f.Name)
		}
		if err := extract(f, filepath.Join(dir, f.Name)); err != nil { //nolint:gosec // the name is checked above to be a plain file name
			return err
		}
	}
	return nil
}

func extract(f *zip.File, to string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, f.Mode().Perm()|0o600)
	if err != nil {
		return err
	}
	// The zips are our own release's, checked against SHA256SUMS before
	// they are unpacked; the limit only bounds a mistake.
	if _, err := io.Copy(w, io.LimitReader(r, maxBinary)); err != nil { //nolint:gosec // see above
		_ = w.Close()
		return err
	}
	return w.Close()
}

// H1 is the h1: hash Terraform and OpenTofu record in .terraform.lock.hcl
// for a release zip: the Go module hash of its contents.
func H1(zipPath string) (string, error) {
	return dirhash.HashZip(zipPath, dirhash.Hash1)
}

// maxBinary bounds what one zip entry may unpack to: 1 GiB, some
// thirty times the provider's size.
const maxBinary = 1 << 30

// mkdirPublic and writePublic make what a mirror or a release holds
// readable by all: a web server or a whole team reads them, and none of
// it is secret.
func mkdirPublic(dir string) error {
	return os.MkdirAll(dir, 0o755) //nolint:gosec // see above
}

func writePublic(path string, data []byte) error {
	return os.WriteFile(path, data, 0o644) //nolint:gosec // see above
}
