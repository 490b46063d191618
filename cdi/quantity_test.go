package cdi

import "testing"

// TestParseQuantity: Kubernetes quantities as bytes, rounded up as
// resource.Quantity.Value rounds them.
func TestParseQuantity(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1": 1, "10737418240": 10737418240, "10Gi": 10 << 30, "1.5Gi": 3 << 29, "512Mi": 512 << 20,
		"1Ki": 1024, "2Ti": 2 << 40, "1Pi": 1 << 50, "7Ei": 7 << 60,
		"5G": 5e9, "100M": 1e8, "3k": 3000, "1T": 1e12, "2P": 2e15, "1E": 1e18,
		"1e9": 1e9, "2E3": 2000, "15e-1": 2, "0.5": 1, "100m": 1, "1500m": 2, "3u": 1, "0.1Ki": 103, ".5Ki": 512,
		"9223372036854775807": 1<<63 - 1,
	}
	for in, want := range good {
		got, err := ParseQuantity(in)
		if err != nil || got != want {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "Gi", "-1", "+1", "1GB", "1gi", "1 Gi", "1.2.3", "8Ei", "9223372036854775808", "1e400", "1e", "0x10", "1Gi "} {
		if got, err := ParseQuantity(in); err == nil {
			t.Errorf("ParseQuantity(%q) = %d, want an error", in, got)
		}
	}
}
