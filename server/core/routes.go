package core

import "net/http"

// ServiceVersion is the service and OpenAPI description version (SPEC §8.7 Versioning), shown by HTTP and MCP.
const ServiceVersion = "1.0.0"

// Prices in atomic USDC units (6 decimals), as SPEC §8.1 sets them.
const (
	PriceCheck     uint64 = 10000 // $0.01
	PricePreflight uint64 = 20000 // $0.02
	PriceEndpoint  uint64 = 5000  // $0.005
)

// Route is one paid operation's terms: the HTTP route that sells it and its price (the MCP tool of the same
// operation has the same price under its own resource URL).
type Route struct {
	Path         string
	Method       string
	Price        uint64
	Description  string
	OfferReceipt bool // x402 offer-receipt extension (SPEC §6.3: the paid HTTP preflight route)
	Trial        bool // the shared free trial is offered
}

// The paid operations.
var (
	RouteCheck = Route{Path: "/v1/check", Method: http.MethodGet, Price: PriceCheck, Trial: true,
		Description: "payguard payee check: OFAC SDN screening of a wallet and a name, merchant domain age and DNS"}
	RoutePreflight = Route{Path: "/v1/preflight", Method: http.MethodPost, Price: PricePreflight, Trial: true, OfferReceipt: true,
		Description: "payguard spend preflight: allow, hold or block an x402 challenge or a cart, with a signed receipt"}
	RouteEndpoint = Route{Path: "/v1/endpoint", Method: http.MethodGet, Price: PriceEndpoint,
		Description: "payguard endpoint index: cached unpaid observations of a public x402 endpoint"}
	Routes = []Route{RouteCheck, RoutePreflight, RouteEndpoint}
)
