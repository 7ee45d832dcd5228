package setup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/redis"
)

// Store is `payguard store`.
var Store = cli.Command{Summary: "initialize or recover the ledger store (store init | reinit --confirm)", Run: runStore}

func runStore(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		cli.WriteUsage(stderr, "store")
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		cli.WriteHelp(stdout, "store", nil)
		return 0
	case "init", "reinit":
	default:
		fmt.Fprintf(stderr, "payguard store: unknown subcommand %q\n", args[0])
		cli.WriteUsage(stderr, "store")
		return 2
	}
	sub := args[0]
	fset := flag.NewFlagSet("payguard store "+sub, flag.ContinueOnError)
	fset.SetOutput(stderr)
	configPath := fset.String("config", "", "configuration file (default: the built-in defaults)")
	confirm := fset.Bool("confirm", false, "reinit: yes, forget the spend the store lost")
	if code, done := cli.ParseFlags(fset, args[1:], stdout); done {
		return code
	}
	if fset.NArg() > 0 {
		cli.WriteUsage(stderr, "store "+sub)
		return 2
	}
	if sub == "reinit" && !*confirm {
		fmt.Fprintln(stderr, "payguard store reinit: forgets the spend the store lost; run it with --confirm")
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "payguard store %s: --config: %v\n", sub, err)
		return 2
	}
	msg, err := storeInit(cfg.Store, sub == "reinit")
	if err != nil {
		fmt.Fprintf(stderr, "payguard store %s: %v\n", sub, err)
		return 1
	}
	fmt.Fprintln(stdout, msg)
	return 0
}

// storeInit does the work of `store init` (replace false) and `store reinit` (replace true).
func storeInit(c config.StoreConfig, replace bool) (string, error) {
	switch c.Driver {
	case config.StoreRedis:
		u, err := c.RedisURL()
		if err != nil {
			return "", err
		}
		epoch, wrote, err := redis.InitEpoch(context.Background(), redis.Options{URL: u, Prefix: c.Redis.Prefix}, replace)
		switch {
		case err != nil:
			return "", err
		case !wrote:
			return "", fmt.Errorf("prefix %q already has a ledger epoch (%s); nothing to do (after a wipe use reinit --confirm)", c.Redis.Prefix, epoch)
		case replace:
			return fmt.Sprintf("new ledger epoch %s under prefix %q; restart every replica", epoch, c.Redis.Prefix), nil
		}
		return fmt.Sprintf("ledger epoch %s written under prefix %q", epoch, c.Redis.Prefix), nil
	case config.StoreBolt:
		if !replace {
			return "", errors.New("the bolt store initializes itself; init is for redis")
		}
		path := c.Path
		if path == "" {
			path = config.DefaultStorePath
		}
		return bolt.Reinit(path)
	}
	return "", fmt.Errorf("store driver %q keeps nothing to recover", c.Driver)
}
