package syncproto

import (
	"testing"
)

// A host or user name with a shell's metacharacters is refused: ssh
// puts both into the commands of a configuration's ProxyCommand, Match
// exec and the like (%h, %r, %u), which a shell runs, and an ssh older
// than OpenSSH 9.6 does not refuse them (CVE-2023-51385). A URL is often
// built by a program from names it was handed.
func TestParseRemoteShellCharacters(t *testing.T) {
	for _, in := range []string{
		"ssh://$(touch$IFS/tmp/pwned)/p",
		"ssh://a;reboot/p",
		"ssh://a&b/p",
		"ssh://a'b/p",
		"ssh://[$(id)]/p",
		"ssh://[::1%25$(id)]/p",
		"ssh://$(id)@host/p",
		"ssh://a;b@host/p",
		"ssh://a'b@host/p",
		"ssh://a(b)@host/p",
		"ssh://a%0Ab@host/p",
	} {
		if got, err := ParseRemote(in); err == nil {
			t.Errorf("%s: got %+v, want a refusal", in, got)
		}
	}
	for _, in := range []string{"ssh://my_vm-1.example.org/p", "ssh://[fe80::1%25eth0]/p", "ssh://10.0.0.1/p", "ssh://first.last@host/p", "ssh://DOMAIN+x@host/p"} {
		if _, err := ParseRemote(in); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}
