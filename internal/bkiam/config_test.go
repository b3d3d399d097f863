package bkiam

import (
	"strings"
	"testing"
	"time"
)

func TestNewValidation(t *testing.T) {
	ok := Config{APIGatewayURL: "https://bkapi.example.com/api/bk-iam/prod", AppCode: "a", AppSecret: "s"}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"gateway ok", func(*Config) {}, ""},
		{"esb ok with username", func(c *Config) { c.APIGatewayURL, c.ESBURL, c.Username = "", "http://paas.example.com/", "u" }, ""},
		{"esb ok with token", func(c *Config) { c.APIGatewayURL, c.ESBURL, c.BKToken = "", "https://paas.example.com", "t" }, ""},
		{"both URLs", func(c *Config) { c.ESBURL = "https://paas.example.com" }, "exactly one"},
		{"no URL", func(c *Config) { c.APIGatewayURL = "" }, "set the API gateway URL or the ESB URL"},
		{"relative URL", func(c *Config) { c.APIGatewayURL = "bkapi.example.com/prod" }, "absolute"},
		{"ftp URL", func(c *Config) { c.APIGatewayURL = "ftp://bkapi.example.com" }, "absolute"},
		{"user info", func(c *Config) { c.APIGatewayURL = "https://u:pw@bkapi.example.com" }, "user information"},
		{"query", func(c *Config) { c.APIGatewayURL = "https://bkapi.example.com/?x=1" }, "query"},
		{"secret in a query", func(c *Config) { c.APIGatewayURL = "https://bkapi.example.com/?bk_app_secret=hunter2" }, "query"},
		{"secret in a query of a relative URL", func(c *Config) { c.APIGatewayURL = "bkapi.example.com/?bk_app_secret=hunter2" }, "absolute"},
		{"password broken by a slash", func(c *Config) { c.APIGatewayURL = "https://alice:hun/ter2@bkapi.example.com" }, "not a valid URL"},
		{"no app code", func(c *Config) { c.AppCode = " " }, "app code"},
		{"no app secret", func(c *Config) { c.AppSecret = "" }, "app secret"},
		{"esb without user", func(c *Config) { c.APIGatewayURL, c.ESBURL = "", "https://paas.example.com" }, "ESB needs a user"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "timeout"},
		{"min above max", func(c *Config) { c.RetryWaitMin, c.RetryWaitMax = time.Minute, time.Second }, "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mutate(&cfg)
			c, err := New(cfg)
			if tt.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			for _, secret := range []string{"u:pw", "hunter2", "hun"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("URL credentials in error: %v", err)
				}
			}
		})
	}
}

func TestDefaultsAndURLs(t *testing.T) {
	c := mustClient(t, Config{APIGatewayURL: "https://gw.example.com/api/bk-iam/prod///", AppCode: "a", AppSecret: "s", MaxRetries: -1})
	if c.cfg.Timeout != DefaultTimeout || c.cfg.RetryWaitMin != time.Second || c.cfg.RetryWaitMax != 30*time.Second ||
		c.cfg.MaxRetries != 0 || c.cfg.UserAgent != DefaultUserAgent || c.http.Timeout != DefaultTimeout {
		t.Errorf("defaults not applied: %+v", c.cfg)
	}
	if got := c.endpointURL(endpointBatchInstance); got != "https://gw.example.com/api/bk-iam/prod/api/v1/open/authorization/batch_instance/" {
		t.Errorf("gateway URL = %s", got)
	}
	e := mustClient(t, Config{ESBURL: "https://paas.example.com/", AppCode: "a", AppSecret: "s", Username: "u"})
	if got := e.endpointURL(endpointCreatorAction); got != "https://paas.example.com/api/c/compapi/v2/iam/authorization/batch_resource_creator_action/" {
		t.Errorf("ESB URL = %s", got)
	}
}
