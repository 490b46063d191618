package syncproto

import (
	"slices"
	"strings"
	"testing"
)

func TestParseRemote(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Remote
		err  string
	}{
		{"ssh://host/dev/vdb", Remote{Host: "host", Path: "/dev/vdb"}, ""},
		{"ssh://alice@host:2222/var/lib/disk.img", Remote{User: "alice", Host: "host", Port: "2222", Path: "/var/lib/disk.img"}, ""},
		{"ssh://[::1]:22/x", Remote{Host: "::1", Port: "22", Path: "/x"}, ""},
		{"ssh://host/~/disk.img", Remote{Host: "host", Path: "disk.img"}, ""},
		{"ssh://host/a%20b%3Fc", Remote{Host: "host", Path: "/a b?c"}, ""},
		{"ssh://host/a?b", Remote{}, "query"},
		{"ssh://host/a#b", Remote{}, "fragment"},
		{"ssh://host", Remote{}, "no path"},
		{"ssh://host/", Remote{}, "no path"},
		{"ssh:///x", Remote{}, "no host"},
		{"ssh://-oProxyCommand=x/p", Remote{}, "ssh option"},
		{"ssh://-l@host/p", Remote{}, "user name"},
		{"ssh://u:pw@host/p", Remote{}, "password"},
		{"http://host/p", Remote{}, "not an ssh"},
		{"ssh://host/a%00b", Remote{}, "NUL"},
	} {
		got, err := ParseRemote(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %+v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		c.want.URL = c.in
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	if !IsRemote("ssh://h/p") || IsRemote("/dev/sda") || IsRemote("nbd://h/e") {
		t.Error("IsRemote")
	}
	if n := (Remote{User: "u", Host: "h", Path: "/p"}).Name(); n != "u@h:/p" {
		t.Errorf("Name %q", n)
	}
}

// The ssh command line: options before the destination, "--" before it,
// the remote ringcp quoted for the remote shell, the path nowhere.
func TestSSHArgs(t *testing.T) {
	r := Remote{User: "bob", Host: "vm1", Port: "2222", Path: "/dev/vdb; rm -rf /"}
	got := SSH{Options: []string{"-F", "/etc/x"}, RemoteRingcp: "/opt/ring cp/it's"}.Args(r)
	want := []string{"ssh", "-o", "BatchMode=yes", "-T", "-x", "-a", "-e", "none", "-p", "2222", "-l", "bob", "-F", "/etc/x",
		"--", "vm1", `'/opt/ring cp/it'\''s'`, "sync", "--serve"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := (SSH{}).Args(Remote{Host: "h", Path: "/p"}); !slices.Equal(got[len(got)-5:], []string{"--", "h", "ringcp", "sync", "--serve"}) {
		t.Fatalf("defaults: %q", got)
	}
}
