// Package release builds the provider's release archives as goreleaser
// does (.goreleaser.yml), without the network: one zip per platform, the
// SHA256SUMS file, its detached signature when a GPG key is configured, and
// the registry manifest. It also lays those archives out as the provider
// mirrors Terraform and OpenTofu install from (mirror.go).
package release

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Name is the project's name, the prefix of every file a release holds.
const Name = "terraform-provider-bkiam"

// DefaultPlatforms are the platforms .goreleaser.yml builds: every pair of
// freebsd, windows, linux, darwin and amd64, 386, arm, arm64 but darwin_386.
var DefaultPlatforms = func() []string {
	var ps []string
	for _, goos := range []string{"darwin", "freebsd", "linux", "windows"} {
		for _, goarch := range []string{"386", "amd64", "arm", "arm64"} {
			if goos == "darwin" && goarch == "386" {
				continue // Go no longer builds it
			}
			ps = append(ps, goos+"_"+goarch)
		}
	}
	return ps
}()

// HostPlatform is the platform of the running process, as os_arch.
func HostPlatform() string { return runtime.GOOS + "_" + runtime.GOARCH }

// Options say what Build builds.
type Options struct {
	// Version is the release's version without a leading v: 1.2.3.
	Version string
	// Platforms are os_arch pairs (linux_amd64); empty means DefaultPlatforms.
	Platforms []string
	// Source is the directory of the provider's main package (the
	// repository's root).
	Source string
	// Manifest is terraform-registry-manifest.json.
	Manifest string
	// Out is the directory the release is written to; created if missing.
	Out string
	// GPGFingerprint, when set, is the key SHA256SUMS is signed with
	// (gpg --detach-sign, as .goreleaser.yml does). Empty leaves the
	// release unsigned.
	GPGFingerprint string
	// GPG is the gpg program; empty means "gpg" in PATH.
	GPG string
	// Log receives a line per step; nil discards them.
	Log io.Writer
}

// Release is what Build wrote.
type Release struct {
	Version string
	// Archives maps os_arch to the zip's path.
	Archives map[string]string
	// SHA256SUMS lists every archive and the manifest, as goreleaser's
	// checksum file does.
	SHA256SUMS string
	// Signature is SHA256SUMS's detached signature; empty when unsigned.
	Signature string
	Manifest  string
}

// versionRE accepts the versions Terraform's version constraints accept:
// three numbers and an optional pre-release.
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

var platformRE = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)

// ArchiveName is the zip of one platform: terraform-provider-bkiam_1.2.3_linux_amd64.zip.
func ArchiveName(version, platform string) string {
	return fmt.Sprintf("%s_%s_%s.zip", Name, version, platform)
}

// BinaryName is the executable inside the zip, named as Terraform's
// registry providers name theirs: terraform-provider-bkiam_v1.2.3.
func BinaryName(version, platform string) string {
	n := Name + "_v" + version
	if strings.HasPrefix(platform, "windows_") {
		n += ".exe"
	}
	return n
}

// SumsName is the checksum file: terraform-provider-bkiam_1.2.3_SHA256SUMS.
func SumsName(version string) string { return fmt.Sprintf("%s_%s_SHA256SUMS", Name, version) }

// ManifestName is the registry manifest: terraform-provider-bkiam_1.2.3_manifest.json.
func ManifestName(version string) string { return fmt.Sprintf("%s_%s_manifest.json", Name, version) }

// Build builds the release opts describe into opts.Out.
func Build(ctx context.Context, opts Options) (*Release, error) {
	v := strings.TrimPrefix(opts.Version, "v")
	if !versionRE.MatchString(v) {
		return nil, fmt.Errorf("version %q: give a semantic version such as 1.2.3 (VERSION=1.2.3)", opts.Version)
	}
	platforms := opts.Platforms
	if len(platforms) == 0 {
		platforms = DefaultPlatforms
	}
	for _, p := range platforms {
		if !platformRE.MatchString(p) {
			return nil, fmt.Errorf("platform %q: give os_arch pairs such as linux_amd64", p)
		}
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	if err := mkdirPublic(opts.Out); err != nil {
		return nil, err
	}
	rel := &Release{Version: v, Archives: map[string]string{}}
	work, err := os.MkdirTemp("", "bkiam-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "_")
		bin := filepath.Join(work, p, BinaryName(v, p))
		fmt.Fprintf(log, "building %s\n", ArchiveName(v, p))
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+v, "-o", bin, ".")
		cmd.Dir = opts.Source
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build for %s: %w\n%s", p, err, out)
		}
		zipPath := filepath.Join(opts.Out, ArchiveName(v, p))
		if err := writeZip(zipPath, bin); err != nil {
			return nil, err
		}
		rel.Archives[p] = zipPath
	}

	manifest, err := os.ReadFile(opts.Manifest)
	if err != nil {
		return nil, fmt.Errorf("reading the registry manifest: %w", err)
	}
	rel.Manifest = filepath.Join(opts.Out, ManifestName(v))
	if err := writePublic(rel.Manifest, manifest); err != nil {
		return nil, err
	}

	// SHA256SUMS covers every archive of the version found in Out, not only
	// those built now: a release built a few platforms at a time still
	// ends with one checksum file for all of them.
	files := []string{rel.Manifest}
	zips, err := filepath.Glob(filepath.Join(opts.Out, Name+"_"+v+"_*.zip"))
	if err != nil {
		return nil, err
	}
	files = append(files, zips...)
	sums, err := sha256Sums(files)
	if err != nil {
		return nil, err
	}
	rel.SHA256SUMS = filepath.Join(opts.Out, SumsName(v))
	if err := writePublic(rel.SHA256SUMS, sums); err != nil {
		return nil, err
	}
	sig := rel.SHA256SUMS + ".sig"
	// A signature of an older SHA256SUMS would not verify: remove it,
	// whether or not a new one is made.
	if err := os.Remove(sig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if opts.GPGFingerprint == "" {
		fmt.Fprintf(log, "%s is not signed: set GPG_FINGERPRINT to sign it\n", filepath.Base(rel.SHA256SUMS))
		return rel, nil
	}
	gpg := opts.GPG
	if gpg == "" {
		gpg = "gpg"
	}
	cmd := exec.CommandContext(ctx, gpg, "--batch", "--local-user", opts.GPGFingerprint, "--output", sig, "--detach-sign", rel.SHA256SUMS)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("signing %s with key %s: %w\n%s", filepath.Base(rel.SHA256SUMS), opts.GPGFingerprint, err, out)
	}
	rel.Signature = sig
	fmt.Fprintf(log, "signed %s with key %s\n", filepath.Base(rel.SHA256SUMS), opts.GPGFingerprint)
	return rel, nil
}

// zipTime is every zip entry's time: a fixed one, so that building the
// same commit twice gives the same archives and the same hashes.
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func writeZip(path, bin string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: filepath.Base(bin), Method: zip.Deflate, Modified: zipTime}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return writePublic(path, buf.Bytes())
}

// FileSHA256 is the hex SHA-256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sha256Sums is the content of a SHA256SUMS file listing files, in the
// format sha256sum -c reads: the hash, two spaces, the base name.
func sha256Sums(files []string) ([]byte, error) {
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	var b bytes.Buffer
	for _, f := range files {
		sum, err := FileSHA256(f)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(f))
	}
	return b.Bytes(), nil
}

// ReadSums parses a SHA256SUMS file into base name → hex hash.
func ReadSums(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("%s line %d: want a SHA-256 hash, two spaces and a file name", path, i+1)
		}
		sums[name] = sum
	}
	return sums, nil
}
