// Command release builds the provider's release archives without the
// network, as goreleaser would (make release), and lays them out as a
// provider mirror (make mirror). See docs/guides/intranet-install.md.
//
//	release build -version 1.2.3 [-platforms linux_amd64,darwin_arm64] [-out dist]
//	release mirror -dist dist -dir /srv/mirror [-layout packed|unpacked|network] [-hostnames h1,h2]
//	release hashes -dist dist
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("say build, mirror or hashes")
	}
	switch args[0] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ContinueOnError)
		version := fs.String("version", "", "the version, such as 1.2.3")
		platforms := fs.String("platforms", "", "comma-separated os_arch pairs (default: those of .goreleaser.yml)")
		out := fs.String("out", "dist", "the directory to write the release to")
		source := fs.String("source", ".", "the repository's root")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		var ps []string
		if *platforms != "" {
			ps = strings.Split(*platforms, ",")
		}
		rel, err := release.Build(context.Background(), release.Options{
			Version:        *version,
			Platforms:      ps,
			Source:         *source,
			Manifest:       filepath.Join(*source, "terraform-registry-manifest.json"),
			Out:            *out,
			GPGFingerprint: os.Getenv("GPG_FINGERPRINT"),
			Log:            os.Stdout,
		})
		if err != nil {
			return err
		}
		fmt.Printf("wrote %d archives, %s and %s into %s\n", len(rel.Archives), filepath.Base(rel.SHA256SUMS), filepath.Base(rel.Manifest), *out)
		return nil
	case "mirror":
		fs := flag.NewFlagSet("mirror", flag.ContinueOnError)
		dist := fs.String("dist", "dist", "the release's directory")
		dir := fs.String("dir", "", "the mirror's directory")
		layout := fs.String("layout", string(release.Packed), "packed, unpacked or network")
		hostnames := fs.String("hostnames", strings.Join(release.DefaultHostnames, ","), "the registry hostnames to serve the provider under")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" {
			return fmt.Errorf("say where the mirror goes: make mirror DIR=/path")
		}
		if err := release.Mirror(release.MirrorOptions{Dist: *dist, Dir: *dir, Layout: release.Layout(*layout), Hostnames: strings.Split(*hostnames, ",")}); err != nil {
			return err
		}
		fmt.Printf("wrote the %s mirror of %s into %s\n", *layout, *dist, *dir)
		return nil
	case "hashes":
		// The hashes .terraform.lock.hcl records for each archive: h1:
		// (what init and providers lock compute) and zh: (the zip's
		// SHA-256), to check a team's lock file against the release.
		fs := flag.NewFlagSet("hashes", flag.ContinueOnError)
		dist := fs.String("dist", "dist", "the release's directory")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		archives, err := release.Archives(*dist)
		if err != nil {
			return err
		}
		for _, a := range archives {
			h1, err := release.H1(a.Path)
			if err != nil {
				return err
			}
			zh, err := release.FileSHA256(a.Path)
			if err != nil {
				return err
			}
			fmt.Printf("%s %s %s zh:%s\n", a.Version, a.Platform, h1, zh)
		}
		return nil
	}
	return fmt.Errorf("%q: say build, mirror or hashes", args[0])
}
