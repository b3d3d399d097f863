package release

import (
	"archive/zip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tinyMain is a main package that prints its stamped version: Build's
// go build runs on it in a second, where the provider would take many.
const tinyMain = `package main

import "fmt"

var version = "dev"

func main() { fmt.Print(version) }
`

func tinySource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":                           "module tiny\n\ngo 1.21\n",
		"main.go":                          tinyMain,
		"terraform-registry-manifest.json": `{"version":1,"metadata":{"protocol_versions":["6.0"]}}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuild: the zips are named as goreleaser names them, hold the binary
// named terraform-provider-bkiam_vVERSION with the version stamped in,
// and SHA256SUMS lists them and the manifest; without a key nothing is
// signed.
func TestBuild(t *testing.T) {
	src := tinySource(t)
	out := t.TempDir()
	host := HostPlatform()
	rel, err := Build(context.Background(), Options{
		Version: "v1.2.3", Platforms: []string{host, "windows_amd64"},
		Source: src, Manifest: filepath.Join(src, "terraform-registry-manifest.json"), Out: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != "1.2.3" || rel.Signature != "" {
		t.Fatalf("version %q, signature %q: want 1.2.3 and none", rel.Version, rel.Signature)
	}
	zr, err := zip.OpenReader(filepath.Join(out, "terraform-provider-bkiam_1.2.3_"+host+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "terraform-provider-bkiam_v1.2.3" || zr.File[0].Mode().Perm()&0o100 == 0 {
		t.Fatalf("the zip holds %v, want one executable terraform-provider-bkiam_v1.2.3", zr.File)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := extract(zr.File[0], bin); err != nil {
		t.Fatal(err)
	}
	if got, err := exec.Command(bin).Output(); err != nil || string(got) != "1.2.3" {
		t.Fatalf("the binary says %q (%v), want the stamped version 1.2.3", got, err)
	}
	wz, err := zip.OpenReader(rel.Archives["windows_amd64"])
	if err != nil {
		t.Fatal(err)
	}
	defer wz.Close()
	if wz.File[0].Name != "terraform-provider-bkiam_v1.2.3.exe" {
		t.Fatalf("the windows zip holds %q, want terraform-provider-bkiam_v1.2.3.exe", wz.File[0].Name)
	}
	sums, err := ReadSums(filepath.Join(out, "terraform-provider-bkiam_1.2.3_SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"terraform-provider-bkiam_1.2.3_" + host + ".zip", "terraform-provider-bkiam_1.2.3_manifest.json", "terraform-provider-bkiam_1.2.3_windows_amd64.zip"}
	for _, name := range want {
		got, err := FileSHA256(filepath.Join(out, name))
		if err != nil || sums[name] != got {
			t.Fatalf("SHA256SUMS says %q for %s, the file hashes to %q (%v)", sums[name], name, got, err)
		}
	}
	if len(sums) != len(want) {
		t.Fatalf("SHA256SUMS lists %v, want %v", sums, want)
	}

	// Built again, the archives are the same bytes: the hashes a team
	// locked stay valid for a rebuild of the same commit.
	first := sums
	if _, err := Build(context.Background(), Options{Version: "1.2.3", Platforms: []string{host, "windows_amd64"}, Source: src, Manifest: filepath.Join(src, "terraform-registry-manifest.json"), Out: out}); err != nil {
		t.Fatal(err)
	}
	again, err := ReadSums(filepath.Join(out, "terraform-provider-bkiam_1.2.3_SHA256SUMS"))
	if err != nil || !reflect.DeepEqual(first, again) {
		t.Fatalf("a rebuild changed SHA256SUMS:\n%v\n%v (%v)", first, again, err)
	}
}

// TestBuildSigns: with a key, gpg signs SHA256SUMS as goreleaser asks it
// to; a failing gpg fails the release and says which key.
func TestBuildSigns(t *testing.T) {
	src := tinySource(t)
	out := t.TempDir()
	fakeGPG := filepath.Join(t.TempDir(), "gpg")
	// It records its arguments and writes a signature where --output says.
	script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(out, "args") + "\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then echo sig > \"$2\"; fi; shift; done\n"
	if err := os.WriteFile(fakeGPG, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{Version: "0.1.0", Platforms: []string{HostPlatform()}, Source: src, Manifest: filepath.Join(src, "terraform-registry-manifest.json"), Out: out, GPGFingerprint: "ABCD1234", GPG: fakeGPG}
	rel, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Signature != filepath.Join(out, "terraform-provider-bkiam_0.1.0_SHA256SUMS.sig") {
		t.Fatalf("signature %q", rel.Signature)
	}
	args, _ := os.ReadFile(filepath.Join(out, "args"))
	if want := "--batch --local-user ABCD1234 --output " + rel.Signature + " --detach-sign " + rel.SHA256SUMS; strings.TrimSpace(string(args)) != want {
		t.Fatalf("gpg ran with %q, want %q", args, want)
	}
	opts.GPG = "/bin/false"
	if _, err := Build(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "ABCD1234") {
		t.Fatalf("a failing gpg gave %v, want an error naming the key", err)
	}
	if _, err := os.Stat(rel.Signature); !os.IsNotExist(err) {
		t.Fatalf("the old signature is still there after a failed signing: %v", err)
	}
}

func TestBuildRefusesBadInput(t *testing.T) {
	for _, opts := range []Options{{Version: "latest"}, {Version: "1.2"}, {Version: "1.2.3", Platforms: []string{"linux/amd64"}}} {
		if _, err := Build(context.Background(), opts); err == nil {
			t.Errorf("Build(%+v) succeeded", opts)
		}
	}
}

// fakeRelease writes a release of version with one zip per platform,
// without building anything.
func fakeRelease(t *testing.T, dist, version string, platforms ...string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), BinaryName(version, "linux_amd64"))
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range platforms {
		z := filepath.Join(dist, ArchiveName(version, p))
		if err := writeZip(z, bin); err != nil {
			t.Fatal(err)
		}
		files = append(files, z)
	}
	sums, err := sha256Sums(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, SumsName(version)), sums, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMirrorPacked(t *testing.T) {
	dist, dir := t.TempDir(), t.TempDir()
	fakeRelease(t, dist, "1.0.0", "linux_amd64", "darwin_arm64")
	if err := Mirror(MirrorOptions{Dist: dist, Dir: dir, Layout: Packed}); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		for _, p := range []string{"linux_amd64", "darwin_arm64"} {
			if _, err := os.Stat(filepath.Join(dir, host, "bkiam/bkiam", ArchiveName("1.0.0", p))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestMirrorUnpacked(t *testing.T) {
	dist, dir := t.TempDir(), t.TempDir()
	fakeRelease(t, dist, "1.0.0", "linux_amd64")
	if err := Mirror(MirrorOptions{Dist: dist, Dir: dir, Layout: Unpacked, Hostnames: []string{"example.com"}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "example.com/bkiam/bkiam/1.0.0/linux_amd64/terraform-provider-bkiam_v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the unpacked provider has mode %v, want it executable", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, "registry.terraform.io")); !os.IsNotExist(err) {
		t.Fatalf("a mirror for example.com alone also wrote registry.terraform.io: %v", err)
	}
}

// TestMirrorNetwork: index.json lists every version the mirror holds,
// those of an earlier run included, and VERSION.json each archive with
// a url relative to it and its zh: hash, the zip's SHA-256.
func TestMirrorNetwork(t *testing.T) {
	dist1, dist2, dir := t.TempDir(), t.TempDir(), t.TempDir()
	fakeRelease(t, dist1, "1.0.0", "linux_amd64", "darwin_arm64")
	fakeRelease(t, dist2, "1.1.0", "linux_amd64")
	for _, dist := range []string{dist1, dist2} {
		if err := Mirror(MirrorOptions{Dist: dist, Dir: dir, Layout: Network}); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(dir, "registry.opentofu.org/bkiam/bkiam")
	var index struct {
		Versions map[string]struct{} `json:"versions"`
	}
	readJSON(t, filepath.Join(base, "index.json"), &index)
	if !reflect.DeepEqual(index.Versions, map[string]struct{}{"1.0.0": {}, "1.1.0": {}}) {
		t.Fatalf("index.json lists %v, want 1.0.0 and 1.1.0", index.Versions)
	}
	var v struct {
		Archives map[string]struct {
			URL    string   `json:"url"`
			Hashes []string `json:"hashes"`
		} `json:"archives"`
	}
	readJSON(t, filepath.Join(base, "1.0.0.json"), &v)
	if len(v.Archives) != 2 {
		t.Fatalf("1.0.0.json lists %v, want linux_amd64 and darwin_arm64", v.Archives)
	}
	a := v.Archives["darwin_arm64"]
	sum, err := FileSHA256(filepath.Join(dist1, ArchiveName("1.0.0", "darwin_arm64")))
	if err != nil {
		t.Fatal(err)
	}
	if a.URL != "terraform-provider-bkiam_1.0.0_darwin_arm64.zip" || !reflect.DeepEqual(a.Hashes, []string{"zh:" + sum}) {
		t.Fatalf("darwin_arm64 is %+v, want the zip beside 1.0.0.json and zh:%s", a, sum)
	}
	if _, err := os.Stat(filepath.Join(base, a.URL)); err != nil {
		t.Fatal(err)
	}
}

// TestMirrorChecksSums: a zip that is not the one SHA256SUMS lists, or a
// release without SHA256SUMS, makes no mirror.
func TestMirrorChecksSums(t *testing.T) {
	dist := t.TempDir()
	fakeRelease(t, dist, "1.0.0", "linux_amd64")
	if err := os.WriteFile(filepath.Join(dist, ArchiveName("1.0.0", "linux_amd64")), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Mirror(MirrorOptions{Dist: dist, Dir: t.TempDir(), Layout: Packed}); err == nil || !strings.Contains(err.Error(), "SHA256SUMS") {
		t.Fatalf("a tampered zip gave %v, want a checksum error", err)
	}
	if err := os.Remove(filepath.Join(dist, SumsName("1.0.0"))); err != nil {
		t.Fatal(err)
	}
	if err := Mirror(MirrorOptions{Dist: dist, Dir: t.TempDir(), Layout: Packed}); err == nil || !strings.Contains(err.Error(), "make release") {
		t.Fatalf("a release without SHA256SUMS gave %v, want an error saying to build one", err)
	}
	if err := Mirror(MirrorOptions{Dist: t.TempDir(), Dir: t.TempDir(), Layout: Packed}); err == nil {
		t.Fatal("an empty dist made a mirror")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestBuildSignsWithGPG signs with a real gpg and a key made for the
// test, in a keyring of its own, and checks the signature with gpg
// --verify, as the install guide tells a team to.
func TestBuildSignsWithGPG(t *testing.T) {
	gpg, err := exec.LookPath("gpg")
	if err != nil {
		t.Skip("no gpg in PATH")
	}
	// GNUPGHOME's path is kept short: gpg-agent's socket lives in it, and
	// a socket's path is limited to about a hundred bytes.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GNUPGHOME", home)
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--kill", "gpg-agent").Run()
		_ = os.RemoveAll(home)
	})
	if out, err := exec.Command(gpg, "--batch", "--passphrase", "", "--quick-gen-key", "bkiam release test <test@example.invalid>", "ed25519", "sign", "never").CombinedOutput(); err != nil {
		t.Skipf("gpg cannot make a key here: %v\n%s", err, out)
	}
	out, err := exec.Command(gpg, "--batch", "--list-keys", "--with-colons").Output()
	if err != nil {
		t.Fatal(err)
	}
	var fpr string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Split(line, ":"); f[0] == "fpr" && fpr == "" {
			fpr = f[9]
		}
	}
	src := tinySource(t)
	rel, err := Build(context.Background(), Options{Version: "0.1.0", Platforms: []string{HostPlatform()}, Source: src, Manifest: filepath.Join(src, "terraform-registry-manifest.json"), Out: t.TempDir(), GPGFingerprint: fpr})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gpg, "--batch", "--verify", rel.Signature, rel.SHA256SUMS).CombinedOutput(); err != nil {
		t.Fatalf("gpg --verify: %v\n%s", err, out)
	}
	if err := os.WriteFile(rel.SHA256SUMS, []byte("tampered\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(gpg, "--batch", "--verify", rel.Signature, rel.SHA256SUMS).Run(); err == nil {
		t.Fatal("the signature verifies a changed SHA256SUMS")
	}
}
