package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/internal/delayproxy"
)

// The sync-ssh workload's other host is this one: an sshd of the
// bench's own (Debian's openssh-server), on a loopback port of its own,
// with a host key and a login key made for the run and a configuration
// that reads nothing of the machine's, reached through a TCP proxy that
// adds 20 ms to every round trip (internal/delayproxy: there is no netem
// here), as a link between two sites would. Both tools log in as root
// with the run's key: ringcp runs `ringcp sync --serve` there (the
// binary benched), rsync its own server. The CPU the table gives is the
// client's (the tool and its ssh); the other host's side is not counted,
// for either tool.

// sshRTT is the round trip added between the two "hosts".
const sshRTT = 20 * time.Millisecond

// sshHost is the client configuration's name for the other host.
const sshHost = "benchsync"

// setupSyncSSH makes the ext4 DST lives on, starts sshd and the delay
// proxy in front of it, and points the pair's plans at them.
func setupSyncSSH(e *Env, src *Source) (*Pair, error) {
	if _, err := lookPath("sshd"); err != nil {
		return nil, fmt.Errorf("%w: %v (apt-get install openssh-server)", errSkip, err)
	}
	if _, err := lookPath("ssh-keygen"); err != nil {
		return nil, fmt.Errorf("%w: %v (apt-get install openssh-client)", errSkip, err)
	}
	fs, err := makeLoopFS(e, src.Size, "sync-ssh")
	if err != nil {
		return nil, err
	}
	stop, cfg, err := startSSHD(e)
	if err != nil {
		fs.close()
		return nil, err
	}
	dst := filepath.Join(fs.dir, "dst.img")
	p := syncPair(src, dst, fs.dev, func() { stop(); fs.close() })
	p.SSH = "ssh -F " + cfg
	p.Remote = sshHost + ":" + dst
	p.Ringcp = e.Ringcp
	return p, nil
}

// startSSHD starts sshd behind the delay proxy and returns what stops
// both and the client configuration's path.
func startSSHD(e *Env) (stop func(), config string, err error) {
	dir := filepath.Join(e.Dir, "sshd")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, "", err
	}
	for _, key := range []string{"host_key", "id"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ringcp-bench", "-f", filepath.Join(dir, key)).CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "id.pub"))
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	madeRun := false
	if err := os.Mkdir("/run/sshd", 0o755); err == nil {
		madeRun = true // sshd's privilege separation folder, as Debian's service makes it
	}
	files := map[string]string{
		"authorized_keys": string(pub),
		"sshd_config": fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\nPidFile none\nAuthorizedKeysFile %s/authorized_keys\n"+
			"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\n", port, dir, dir),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return nil, "", err
		}
	}
	sshd, _ := lookPath("sshd")
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start sshd: %w", err)
	}
	proxy, err := delayproxy.Start(fmt.Sprintf("127.0.0.1:%d", port), sshRTT, 0)
	stop = func() {
		if proxy != nil {
			proxy.Close()
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
		if madeRun {
			os.Remove("/run/sshd")
		}
	}
	if err != nil {
		stop()
		return nil, "", err
	}
	_, proxyPort, _ := net.SplitHostPort(proxy.Addr())
	config = filepath.Join(dir, "ssh_config")
	client := fmt.Sprintf("Host %s\n  HostName 127.0.0.1\n  Port %s\n  User root\n  IdentityFile %s/id\n  IdentitiesOnly yes\n  IdentityAgent none\n"+
		"  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n", sshHost, proxyPort, dir)
	if err := os.WriteFile(config, []byte(client), 0o600); err != nil {
		stop()
		return nil, "", err
	}
	if err := waitPort(port); err != nil {
		stop()
		return nil, "", err
	}
	return stop, config, nil
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitPort waits until something accepts connections on port.
func waitPort(port int) error {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("sshd did not listen on port %d within 10s", port)
}

// syncSSHPlan is ringcp sync SRC ssh://host/DST, the other host's half
// the binary benched.
func syncSSHPlan(j Job) Plan {
	host, path, _ := strings.Cut(j.Remote, ":")
	return Plan{{append(append([]string{"ringcp", "sync", "--json", "--progress", "none", "--ssh", j.SSH, "--remote-ringcp", j.Ringcp},
		j.Extra...), j.Src, "ssh://"+host+path)}}
}

// rsyncSSHPlan is rsync to host:DST over the same ssh: its delta
// algorithm runs by default there (it sends only what differs), writing
// a new file renamed over DST; --inplace writes into DST.
func rsyncSSHPlan(flags ...string) func(j Job) Plan {
	return func(j Job) Plan {
		return Plan{{append(append([]string{"rsync", "-e", j.SSH}, flags...), j.Src, j.Remote)}}
	}
}

// parseSyncSSH checks that ringcp's sync across hosts completed.
func parseSyncSSH(out [][]byte, r *Run) error {
	last := lastJSON(out[0])
	var rep struct {
		Outcome  string `json:"outcome"`
		Granules int64  `json:"granules"`
		Engine   string `json:"engine"`
	}
	if err := json.Unmarshal(last, &rep); err != nil || rep.Outcome != "complete" || rep.Granules == 0 {
		return fmt.Errorf("ringcp sync --json: %v: %s", err, last)
	}
	r.Ringcp = &ringcpReport{Engine: rep.Engine}
	return nil
}
