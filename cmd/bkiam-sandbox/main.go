// Command bkiam-sandbox serves the BlueKing IAM authorization API emulator (see internal/sandbox).
//
//	bkiam-sandbox [--listen 127.0.0.1:8080] [--model FILE.json] [--state FILE.json]
//
// Once serving it prints "bkiam-sandbox listening on http://HOST:PORT". On SIGINT/SIGTERM it finishes
// in-flight requests, saves the state file and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/demo"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// shutdownTimeout bounds how long in-flight requests may take after a signal.
const shutdownTimeout = 30 * time.Second

// run is main without os.Exit, so tests can drive it in-process with real signals.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bkiam-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on; port 0 picks a free port")
	modelPath := fs.String("model", "", "JSON permission model (default: the embedded model)")
	statePath := fs.String("state", "", "file where policies persist across restarts (default: memory only)")
	exampleSite := fs.Bool("example-site", false, "fill the sandbox, through its own APIs, with the existing site of the adoption guide "+
		"(docs/guides/adopt-a-site.md): a grade manager, groups, members, permissions and users' grants")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bkiam-sandbox: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	var opts []sandbox.Option
	if *modelPath != "" {
		m, err := sandbox.LoadModelFile(*modelPath)
		if err != nil {
			fmt.Fprintf(stderr, "bkiam-sandbox: %v\n", err)
			return 1
		}
		opts = append(opts, sandbox.WithModel(m))
	}
	if *statePath != "" {
		opts = append(opts, sandbox.WithStateFile(*statePath))
	}
	srv, err := sandbox.New(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "bkiam-sandbox: %v\n", err)
		return 1
	}

	// Register for signals before announcing the address, so a signal sent right after the line is
	// never the default (fatal) one.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "bkiam-sandbox: listen: %v\n", err)
		return 1
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	if *exampleSite {
		if err := fillExampleSite(ctx, "http://"+ln.Addr().String(), stdout); err != nil {
			fmt.Fprintf(stderr, "bkiam-sandbox: -example-site: %v\n", err)
			_ = hs.Close()
			return 1
		}
	}
	fmt.Fprintf(stdout, "bkiam-sandbox listening on http://%s\n", ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(stderr, "bkiam-sandbox: serve: %v\n", err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	code := 0
	if err := hs.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "bkiam-sandbox: shutdown: %v\n", err)
		code = 1
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "bkiam-sandbox: serve: %v\n", err)
		code = 1
	}
	if err := srv.Save(); err != nil {
		fmt.Fprintf(stderr, "bkiam-sandbox: save state: %v\n", err)
		return 1
	}
	return code
}

// fillExampleSite fills the sandbox at url as a team's scripts would, with
// the app every sandbox knows, and says what it made.
func fillExampleSite(ctx context.Context, url string, stdout io.Writer) error {
	c, err := bkiam.New(bkiam.Config{APIGatewayURL: url, AppCode: "bkiam-sandbox", AppSecret: "sandbox-secret"})
	if err != nil {
		return err
	}
	site, err := demo.FillExampleSite(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bkiam-sandbox: example site: grade manager %d of bk_cmdb, groups dev (%d) and ops (%d), their members, "+
		"dev's edit_host permission, and view_host granted to alice, dave and ops\n", site.GradeManager, site.Dev, site.Ops)
	return nil
}
