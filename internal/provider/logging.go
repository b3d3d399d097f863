package provider

import "os"

// QuietUnrequestedLogs turns the SDK's own logging off when nobody asked
// for logs. The provider process inherits Terraform's environment: with
// neither TF_LOG nor TF_LOG_PROVIDER set, Terraform discards whatever the
// provider logs, yet the SDK would still render a JSON trace line for
// every value it walks — most of the provider's time on a large plan. A
// variable the user set, even empty, is left alone.
func QuietUnrequestedLogs() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, name := range []string{"TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if _, set := os.LookupEnv(name); !set {
			_ = os.Setenv(name, "off")
		}
	}
}
