package sandbox

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

type transport int

const (
	esb transport = iota
	gateway
)

// call is one request in flight with the transport it came through.
type call struct {
	tr    transport
	w     http.ResponseWriter
	r     *http.Request
	esbID string // ESB's request_id, put in every ESB body
}

// saasBody is the SaaS envelope; ESB adds request_id to it (omitted on the gateway).
type saasBody struct {
	Result    bool   `json:"result"`
	Code      int    `json:"code"`
	Message   string `json:"message"`
	Data      any    `json:"data"`
	RequestID string `json:"request_id,omitempty"`
}

type gatewayBody struct {
	Result   bool   `json:"result"`
	Code     int    `json:"code"`
	CodeName string `json:"code_name"`
	Message  string `json:"message"`
	Data     any    `json:"data"`
}

func (c *call) writeJSON(status int, body any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(append(marshalJSON(body), '\n'))
}

func marshalJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own types are marshalled; this cannot happen, but never panic on a request.
		return []byte(`{"result":false,"code":1902500,"message":"encode response failed","data":null}`)
	}
	return b
}

// writeSaaS answers a SaaS result. The gateway passes the SaaS status through; ESB always answers 200
// and adds its request_id.
func (c *call) writeSaaS(data any, err *saasError) {
	body := saasBody{Result: true, Code: codeOK, Message: "OK", Data: data}
	status := http.StatusOK
	if err != nil {
		body = saasBody{Result: false, Code: err.code, Message: err.message, Data: nil}
		status = saasStatus(err.code)
	}
	if c.tr == esb {
		body.RequestID = c.esbID
		status = http.StatusOK
	}
	c.writeJSON(status, body)
}

// writeGatewayError answers a failure of the API gateway itself.
func (c *call) writeGatewayError(status, code int, msg string) {
	h := c.w.Header()
	h.Set("X-Bkapi-Error-Code", strconv.Itoa(code))
	h.Set("X-Bkapi-Error-Message", msg)
	name := gatewayCodeNames[code]
	if name == "" {
		name = "UNKNOWN"
	}
	c.writeJSON(status, gatewayBody{Result: false, Code: code, CodeName: name, Message: msg, Data: nil})
}

// writeESBError answers a failure of ESB's own checks: HTTP 200, code 1306xxx, request_id.
func (c *call) writeESBError(code int, msg string) {
	c.writeJSON(http.StatusOK, saasBody{Result: false, Code: code, Message: msg, Data: nil, RequestID: c.esbID})
}

// credentials are the app fields of either transport.
type credentials struct {
	AppCode   string `json:"bk_app_code"`
	AppSecret string `json:"bk_app_secret"`
	Username  string `json:"bk_username"`
	Token     string `json:"bk_token"`
}

// headerCredentials parses X-Bkapi-Authorization (a JSON object); ok is false when absent or invalid.
func headerCredentials(r *http.Request) (credentials, bool) {
	var cr credentials
	h := r.Header.Get("X-Bkapi-Authorization")
	if h == "" {
		return cr, false
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(h), &raw); err != nil {
		return cr, false
	}
	cr.AppCode, cr.AppSecret = stringField(raw, "bk_app_code"), stringField(raw, "bk_app_secret")
	cr.Username, cr.Token = stringField(raw, "bk_username"), stringField(raw, "bk_token")
	return cr, true
}

func stringField(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

// gatewayAuth checks the gateway credentials: only the header counts.
func (s *Server) gatewayAuth(c *call) (*App, bool) {
	cr, ok := headerCredentials(c.r)
	if !ok || cr.AppCode == "" {
		c.writeGatewayError(http.StatusBadRequest, codeGWBadArgs,
			`Parameters error [reason="app code cannot be empty, please provide bk_app_code in the X-Bkapi-Authorization header"]`)
		return nil, false
	}
	app := s.model.apps[cr.AppCode]
	if app == nil || app.Secret != cr.AppSecret {
		c.writeGatewayError(http.StatusBadRequest, codeGWBadArgs,
			`Parameters error [reason="bk_app_code or bk_app_secret is incorrect"]`)
		return nil, false
	}
	return app, true
}

// esbAuth checks ESB's app and user: credentials from the body, else the header; then a user, by
// bk_token, or by bk_username for apps on the skip-login whitelist.
func (s *Server) esbAuth(c *call, body any) (*App, bool) {
	var cr credentials
	if m, ok := body.(map[string]any); ok {
		cr.AppCode, cr.AppSecret = stringField(m, "bk_app_code"), stringField(m, "bk_app_secret")
		cr.Username, cr.Token = stringField(m, "bk_username"), stringField(m, "bk_token")
	}
	if cr.AppCode == "" {
		if hc, ok := headerCredentials(c.r); ok {
			cr = hc
		}
	}
	if cr.AppCode == "" {
		c.writeESBError(codeESBAppUser, "bk_app_code or app_code cannot be empty")
		return nil, false
	}
	app := s.model.apps[cr.AppCode]
	if app == nil || app.Secret != cr.AppSecret {
		c.writeESBError(codeESBAppUser, "APP Secret verification failed, please check bk_app_code and bk_app_secret")
		return nil, false
	}
	switch {
	case cr.Token != "":
		if _, ok := s.model.Tokens[cr.Token]; !ok {
			c.writeESBError(codeESBAppUser, "User authentication failed, please check if the bk_token is valid")
			return nil, false
		}
	case cr.Username != "":
		if !app.ESBSkipLogin {
			c.writeESBError(codeESBAppUser, "User authentication failed, the APP ["+app.Code+
				"] is not on the skip-login whitelist, please provide bk_token instead of bk_username")
			return nil, false
		}
	default:
		c.writeESBError(codeESBAppUser, "User authentication failed, please provide a valid user identity, such as bk_username, bk_token")
		return nil, false
	}
	return app, true
}
