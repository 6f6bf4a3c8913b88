//go:build kruisee2e

// The packages of Kruise's e2e suite, imported so that `go mod tidy` keeps
// every module the test binary needs. Build-tagged: nothing here is compiled;
// the binary is `go test -c github.com/openkruise/kruise/test/e2e`.
package kruisee2e

import (
	_ "github.com/openkruise/kruise/test/e2e"
	_ "github.com/openkruise/kruise/test/e2e/apps/v1alpha1"
	_ "github.com/openkruise/kruise/test/e2e/apps/v1beta1"
	_ "github.com/openkruise/kruise/test/e2e/policy/v1alpha1"
)
