// Package archtest holds the test (layers_test.go) that keeps payguard's import graph pointing one way: down the layers
// below, never up. A package may import packages of its own layer or of lower ones; importing a higher
// layer fails TestLayers, naming the arrow. The layers, lowest first:
//
//  0. leaves: internal/{evmaddr,base58,buildinfo,shell,egress,logbuf,logout,errbody,inputerr,timefmt,plainurl,readlimit,slotmemo} and the test helpers, x402/jsonscan,
//     x402/svm (no payguard imports above them);
//  1. the wire and the rules: x402, policy;
//  2. state and settings: config, store (and its drivers, store/open), receipts;
//  3. facts: screening (and its sources), index, internal/apitoken, internal/chartschema;
//  4. the decision: preflight;
//  5. the components that serve it: proxy, server (and their subpackages);
//  6. the command-line tools: internal/cli and its packages;
//  7. composition: internal/app;
//  8. programs: cmd/..., internal/cmd/... .
//
// Besides the layers: nothing but cmd/payguard imports internal/app, and nothing imports a program. A
// package's own test files count as the package (a test that imports upward ties the lower package to the
// higher one all the same). An external test package (package x_test, named "x [external test]" here) is a
// package of its own that may put higher layers together, as a program does (screening's integration test
// drives the engine); the two rules above hold for it too.
package archtest
