package bkiam

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

func TestLogsNeverContainSecrets(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)

	// A server that echoes everything it got, headers included, so any leak would show.
	echo := func(status int, code string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			raw := strings.ReplaceAll(bodyOf(r), `"`, `'`)
			auth := strings.ReplaceAll(r.Header.Get("X-Bkapi-Authorization"), `"`, `'`)
			reply(status, `{"result":false,"code":`+code+`,"message":"echo `+raw+` `+auth+`","request_id":"e1"}`)(w, r)
		}
	}
	for _, cfg := range []Config{gatewayConfig(""), esbConfig("")} {
		for _, h := range []http.HandlerFunc{reply(200, okBody), echo(200, "1306429"), echo(400, "1902412"), reply(502, "<html>"+testAppSecret+"</html>")} {
			fs := newFakeServer(t, h)
			if cfg.APIGatewayURL != "" {
				cfg.APIGatewayURL = fs.URL
			} else {
				cfg.ESBURL = fs.URL
			}
			c := mustClient(t, cfg)
			_, err := c.BatchInstance(ctx, grantReq())
			if err != nil {
				assertNoSecrets(t, err.Error())
			}
			_, _ = c.BatchResourceCreatorAction(ctx, CreatorActionRequest{System: "s", Type: "t", Creator: "u",
				Instances: []CreatorInstance{{ID: "1", Name: "n"}}})
		}
	}

	logs := buf.String()
	assertNoSecrets(t, logs)
	entries, err := tflogtest.MultilineJSONDecode(strings.NewReader(logs))
	if err != nil {
		t.Fatalf("decoding logs: %v", err)
	}
	var debugLines, traceReqs, traceResps int
	var sawRedactedESBBody bool
	for _, e := range entries {
		if e["@module"] != "provider.bkiam" {
			t.Errorf("log entry outside the bkiam subsystem: %v", e)
		}
		switch e["@message"] {
		case "IAM call succeeded", "IAM call failed":
			debugLines++
			for _, k := range []string{"operation", "url", "attempts", "duration_ms", "request_id"} {
				if _, ok := e[k]; !ok {
					t.Errorf("debug line lacks %s: %v", k, e)
				}
			}
		case "sending IAM request":
			traceReqs++
			if body, _ := e["body"].(string); strings.Contains(body, `"bk_app_secret":"***"`) && strings.Contains(body, `"bk_token":"***"`) {
				sawRedactedESBBody = true
			}
		case "received IAM response":
			traceResps++
		}
	}
	// 2 transports x 4 servers x 2 calls.
	if debugLines != 16 {
		t.Errorf("%d debug lines, want one per call (16)", debugLines)
	}
	if traceReqs < 16 || traceResps < 16 {
		t.Errorf("trace lines: %d requests, %d responses", traceReqs, traceResps)
	}
	if !sawRedactedESBBody {
		t.Errorf("no redacted ESB request body in the trace logs")
	}
}

func TestNoLoggerInContextIsFine(t *testing.T) {
	fs := newFakeServer(t, reply(200, okBody))
	if _, err := mustClient(t, esbConfig(fs.URL)).BatchInstance(context.Background(), grantReq()); err != nil {
		t.Fatal(err)
	}
}
