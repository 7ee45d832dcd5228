package mcp

import "github.com/payguard/payguard/server/schema"

// The tools' arguments are server/schema's types, the one source of the MCP inputSchemas and of
// /openapi.json's request components.
type (
	CheckPayeeArgs    = schema.CheckPayeeArgs
	PreflightArgs     = schema.PreflightArgs
	Challenge         = schema.Challenge
	Cart              = schema.Cart
	Rules             = schema.Rules
	SpendContext      = schema.SpendContext
	CheckEndpointArgs = schema.CheckEndpointArgs
	ServiceInfoArgs   = schema.ServiceInfoArgs
)

func ptr[T any](v T) *T { return &v }
