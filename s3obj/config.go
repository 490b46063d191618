package s3obj

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// profileConfig is what the shared config file says for one profile.
type profileConfig struct {
	values map[string]string // key = value; "s3.addressing_style" for the s3 sub-section
}

func (p profileConfig) get(key string) string { return p.values[key] }

// configFile is AWS_CONFIG_FILE, else ~/.aws/config.
func configFile() string {
	if f := os.Getenv("AWS_CONFIG_FILE"); f != "" {
		return f
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".aws", "config")
}

// loadProfile reads profile's section of the shared config file:
// "[default]" for the default profile, "[profile NAME]" for the others
// (the AWS CLI's rule). A missing file or section is an empty profile.
func loadProfile(path, profile string) profileConfig {
	p := profileConfig{values: map[string]string{}}
	f, err := os.Open(path)
	if err != nil {
		return p
	}
	defer f.Close()
	want := "profile " + profile
	if profile == "default" {
		want = "default"
	}
	in, sub := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if trimmed[0] == '[' {
			name := strings.TrimSpace(strings.Trim(trimmed, "[]"))
			in, sub = name == want, ""
			continue
		}
		key, value, ok := strings.Cut(trimmed, "=")
		if !in || !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		indented := line[0] == ' ' || line[0] == '\t'
		switch {
		case indented && sub != "":
			p.values[sub+"."+key] = value
		case value == "":
			// "s3 =" opens a sub-section of indented lines.
			sub = key
		default:
			sub = ""
			p.values[key] = value
		}
	}
	return p
}
