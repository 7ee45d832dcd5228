package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/server/docs"
)

// The wire: initialize in every version the discovery documents advertise (2025-03-26 is SPEC §8.5's sample),
// JSON answers, the initialized notification, and what a stateless server refuses.
func TestInitializeAndJSONResponses(t *testing.T) {
	e := newEnv(t)
	if !slices.Contains(docs.MCPProtocolVersions, "2025-03-26") {
		t.Fatalf("advertised versions %v leave out SPEC's 2025-03-26", docs.MCPProtocolVersions)
	}
	for _, v := range docs.MCPProtocolVersions {
		resp, body := e.rpc(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+
			`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s %s", v, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var m struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
				ServerInfo      struct{ Name, Version string }
				Capabilities    map[string]any
				Instructions    string
			}
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if m.Result.ProtocolVersion != v || m.Result.ServerInfo.Name != "payguard" || m.Result.Instructions == "" {
			t.Fatalf("%s: %s", v, body)
		}
		for _, c := range []string{"tools", "resources", "prompts"} {
			if _, ok := m.Result.Capabilities[c]; !ok {
				t.Fatalf("%s: no %s capability: %s", v, c, body)
			}
		}
		if resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("a stateless server set a session id")
		}
		if resp.Header.Get("X-Data-As-Of") == "" {
			t.Fatal("no X-Data-As-Of")
		}
	}
	// A version not advertised is not agreed to: the legacy handshake answers with one it does support.
	for _, v := range []string{"2024-11-05", "2026-07-28"} {
		_, body := e.rpc(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+
			`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
		var m struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
		}
		json.Unmarshal(body, &m)
		if !slices.Contains(docs.MCPProtocolVersions, m.Result.ProtocolVersion) {
			t.Fatalf("initialize in unadvertised %s answered %q: %s", v, m.Result.ProtocolVersion, body)
		}
	}
	resp, body := e.rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}
	// A later request of the same (stateless) client: tools/call with params.name and params.arguments.
	resp, body = e.rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_service_info","arguments":{}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-03-26"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"payTo"`) {
		t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest(http.MethodGet, e.url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /mcp: %d", r.StatusCode)
	}
}

// The edge: a body over the limit, and a Host that a DNS-rebinding page would send to a loopback listener.
func TestEdgeLimits(t *testing.T) {
	e := newEnv(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_payee","arguments":{"name":"` +
		strings.Repeat("a", MaxRequestBytes) + `"}}}`
	if resp, _ := e.rpc(big, nil); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", resp.StatusCode)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	if resp, _ := e.rpc(init, map[string]string{"Host": "attacker.example"}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebinding Host: %d", resp.StatusCode)
	}
	if resp, body := e.rpc(init, map[string]string{"Host": "localhost"}); resp.StatusCode != 200 {
		t.Fatalf("localhost Host: %d %s", resp.StatusCode, body)
	}
	if e.fac.Calls() != 0 {
		t.Fatal("the facilitator was called")
	}
}

// tools/list as a client receives it: four tools, each property of each input schema an object schema with
// a type and a description (the TypeScript client refuses bare `true` schemas), bounds on strings.
func TestToolSchemas(t *testing.T) {
	e := newEnv(t)
	resp, body := e.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var m struct {
		Result struct {
			Tools []struct {
				Name, Description string
				InputSchema       map[string]any
				OutputSchema      map[string]any
				Annotations       map[string]any
			}
		}
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range m.Result.Tools {
		names = append(names, tool.Name)
		schemas[tool.Name] = tool.InputSchema
		if tool.InputSchema["type"] != "object" || tool.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: root %v", tool.Name, tool.InputSchema)
		}
		if len(tool.Description) < 100 {
			t.Errorf("%s: description too thin for a model: %q", tool.Name, tool.Description)
		}
		if tool.OutputSchema != nil {
			t.Errorf("%s: an outputSchema would make clients validate payment-required results against it", tool.Name)
		}
		if tool.Annotations["readOnlyHint"] != true {
			t.Errorf("%s: annotations %v", tool.Name, tool.Annotations)
		}
		walkSchema(t, tool.Name, tool.InputSchema, true)
	}
	slices.Sort(names)
	if want := []string{"check_endpoint", "check_payee", "get_service_info", "preflight_payment"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}

	props := func(s map[string]any) map[string]any { return s["properties"].(map[string]any) }
	cp := props(schemas["check_payee"])
	for name, max := range map[string]float64{"name": 256, "domain": 2048, "wallet": 256} {
		if p := cp[name].(map[string]any); p["type"] != "string" || p["maxLength"] != max {
			t.Errorf("check_payee.%s: %v", name, p)
		}
	}
	pre := props(schemas["preflight_payment"])
	ch := pre["challenge"].(map[string]any)
	if ch["type"] != "object" || !slices.Contains(toStrings(ch["required"]), "accepts") ||
		props(ch)["accepts"].(map[string]any)["maxItems"] != float64(32) {
		t.Errorf("challenge %v", ch)
	}
	if _, ok := ch["additionalProperties"]; ok {
		t.Errorf("x402 members beyond the known ones must stay allowed: %v", ch)
	}
	rules := props(pre["rules"].(map[string]any))
	// The schema's rule names are the engine's: every policy.Rules member, no other.
	var engineRules map[string]any
	if b, err := json.Marshal(policy.DefaultRules()); err != nil || json.Unmarshal(b, &engineRules) != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(rules)), slices.Sorted(maps.Keys(engineRules)); !slices.Equal(got, want) || len(got) != 15 {
		t.Errorf("rules schema properties %v, engine rules %v (SPEC has 15)", got, want)
	}
	mpm := rules["max_price_multiple"].(map[string]any)
	if !slices.Equal(toStrings(mpm["type"]), []string{"number", "null"}) {
		t.Errorf("max_price_multiple %v", mpm)
	}
	if d := rules["max_per_payment_usd"].(map[string]any)["description"].(string); !strings.Contains(d, "Default here: 1") {
		t.Errorf("max_per_payment_usd description %q", d)
	}
	if a := rules["allowed_networks"].(map[string]any); a["type"] != "array" || a["maxItems"] != float64(100) {
		t.Errorf("allowed_networks %v", a)
	}
	cart := pre["cart"].(map[string]any)
	if cart["type"] != "object" || !slices.Contains(toStrings(cart["required"]), "total_usd") {
		t.Errorf("cart %v", cart)
	}
	if u := props(schemas["check_endpoint"])["url"].(map[string]any); u["type"] != "string" ||
		!slices.Contains(toStrings(schemas["check_endpoint"]["required"]), "url") {
		t.Errorf("check_endpoint.url %v", u)
	}
}

// walkSchema fails on a schema node that is not an object with a type, and, for properties, on one without
// a description.
func walkSchema(t *testing.T, path string, node any, isProperty bool) {
	t.Helper()
	s, ok := node.(map[string]any)
	if !ok {
		t.Errorf("%s: schema %v is not an object schema", path, node)
		return
	}
	if _, ok := s["type"]; !ok {
		t.Errorf("%s: no type: %v", path, s)
	}
	if d, _ := s["description"].(string); isProperty && d == "" && path != "" && strings.Contains(path, ".") {
		t.Errorf("%s: no description", path)
	}
	if ps, ok := s["properties"].(map[string]any); ok {
		for k, v := range ps {
			walkSchema(t, path+"."+k, v, true)
		}
	}
	if it, ok := s["items"]; ok {
		walkSchema(t, path+"[]", it, false)
	}
}

func toStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, s := range x {
			out = append(out, s.(string))
		}
	case string:
		out = append(out, x)
	}
	return out
}

// The instructions a model reads state the deployment's trial limit, not a fixed one.
func TestInstructionsStateTheTrialLimit(t *testing.T) {
	if got := instructions(5); !strings.Contains(got, "free for 5 calls per IP per UTC day, then cost $0.01") {
		t.Errorf("limit 5: %s", got)
	}
	if got := instructions(0); strings.Contains(got, "free for") || !strings.Contains(got, "preflight_payment cost $0.01") {
		t.Errorf("no trial: %s", got)
	}
}

// On a loopback listener (behind a local reverse proxy), the configured base URL's host is accepted as well
// as loopback names; any other Host is a DNS-rebinding attempt. On any other listener the Host is not judged.
func TestHostAllowedAcceptsTheBaseURLHost(t *testing.T) {
	h := &Handler{host: "mcp.example"}
	req := func(local, host string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = host
		addr, err := net.ResolveTCPAddr("tcp", local)
		if err != nil {
			t.Fatal(err)
		}
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
	}
	for _, c := range []struct {
		local, host string
		want        bool
	}{
		{"127.0.0.1:8080", "mcp.example", true},
		{"127.0.0.1:8080", "MCP.example", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"[::1]:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "other.example", false},
		{"127.0.0.1:8080", "mcp.example.attacker.example", false},
		{"10.0.0.5:8080", "other.example", true},
	} {
		if got := h.hostAllowed(req(c.local, c.host)); got != c.want {
			t.Errorf("listener %s, Host %q: allowed %v, want %v", c.local, c.host, got, c.want)
		}
	}
}
