package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// NotifyConfig is `admin.notify:`: webhooks told when a hold is created, resolved or expires. Deliveries
// never sit on a decision's path: they are queued (bounded) and sent in the background.
type NotifyConfig struct {
	// ConsoleURL is the console's address as approvers reach it, for the approve link in every event
	// ("" = http://<admin.listen>/).
	ConsoleURL string `yaml:"console_url"`
	// Webhooks each receive every event. Their URLs (Slack's incoming webhooks are secrets) and signing
	// secrets come from a file or an environment variable, never from this file.
	Webhooks []WebhookConfig `yaml:"webhooks"`
	// QueueSize bounds the events waiting per webhook; past it new events are dropped and counted.
	QueueSize int `yaml:"queue_size"`
	// MaxAttempts is how often one event is tried (connection errors, 5xx and 429 are retried with
	// exponential backoff).
	MaxAttempts int `yaml:"max_attempts"`
	// Timeout bounds one delivery attempt.
	Timeout Duration `yaml:"timeout"`
	// Poll is how often the store's holds are read for changes made elsewhere (another proxy sharing the
	// store, an expiry); this process's own holds and approvals are sent at once.
	Poll Duration `yaml:"poll"`
}

// WebhookConfig is one receiver. Exactly one of URLFile and URLEnv names its URL; SecretFile or SecretEnv
// (optional) the HMAC-SHA256 key for the X-Payguard-Signature header.
type WebhookConfig struct {
	URLFile    string `yaml:"url_file"`
	URLEnv     string `yaml:"url_env"`
	SecretFile string `yaml:"secret_file"`
	SecretEnv  string `yaml:"secret_env"`
}

func defaultNotify() NotifyConfig {
	return NotifyConfig{QueueSize: 256, MaxAttempts: 5, Timeout: Duration(5 * time.Second), Poll: Duration(2 * time.Second)}
}

func (c *NotifyConfig) validate() error {
	var errs []error
	if c.ConsoleURL != "" {
		u, err := url.Parse(c.ConsoleURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("admin.notify.console_url: %q is not an http(s) URL", c.ConsoleURL))
		}
	}
	if c.QueueSize < 1 || c.QueueSize > 100000 {
		errs = append(errs, fmt.Errorf("admin.notify.queue_size: %d is not in 1..100000", c.QueueSize))
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 20 {
		errs = append(errs, fmt.Errorf("admin.notify.max_attempts: %d is not in 1..20", c.MaxAttempts))
	}
	if c.Timeout <= 0 || c.Poll <= 0 {
		errs = append(errs, fmt.Errorf("admin.notify: timeout and poll must be positive"))
	}
	for i, w := range c.Webhooks {
		if (w.URLFile == "") == (w.URLEnv == "") {
			errs = append(errs, fmt.Errorf("admin.notify.webhooks[%d]: set exactly one of url_file and url_env", i))
		}
		if w.SecretFile != "" && w.SecretEnv != "" {
			errs = append(errs, fmt.Errorf("admin.notify.webhooks[%d]: set at most one of secret_file and secret_env", i))
		}
	}
	return errors.Join(errs...)
}

// Resolve reads the webhook's URL and secret from its file or environment variable. The URL must be
// http(s); a named secret that is empty is an error, so a signature that was asked for is never skipped.
func (w WebhookConfig) Resolve() (rawURL string, secret []byte, err error) {
	rawURL, err = fromFileOrEnv("webhook url", w.URLFile, w.URLEnv)
	if err != nil {
		return "", nil, err
	}
	u, perr := url.Parse(rawURL)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is a secret: say where it came from, not what it is.
		src := w.URLFile
		if src == "" {
			src = "$" + w.URLEnv
		}
		return "", nil, fmt.Errorf("webhook url from %s is not an http(s) URL", src)
	}
	if w.SecretFile == "" && w.SecretEnv == "" {
		return rawURL, nil, nil
	}
	s, err := fromFileOrEnv("webhook secret", w.SecretFile, w.SecretEnv)
	if err != nil {
		return "", nil, err
	}
	return rawURL, []byte(s), nil
}

// fromFileOrEnv reads a secret from file, or else from the environment variable env, trimmed. Errors name
// where it came from (what, the file or $env), never the value.
func fromFileOrEnv(what, file, env string) (string, error) {
	var v string
	src := file
	if file == "" {
		src = "$" + env
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		v = string(b)
	} else {
		v = os.Getenv(env)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fmt.Errorf("%s: %s is empty", what, src)
	}
	return v, nil
}
