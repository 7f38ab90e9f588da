// Command ferretdb-server runs an embedded FerretDB (MongoDB wire protocol)
// with the PostgreSQL backend (the default) or the SQLite one, for local integration tests only.
//
// Usage (PostgreSQL, then SQLite):
//
//	ferretdb-server -listen 127.0.0.1:27018 -postgresql-url postgres://127.0.0.1:5432/ferretdb
//	ferretdb-server -listen 127.0.0.1:27018 -state /path/to/dir
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27018", "TCP address to listen on")
	stateDir := flag.String("state", "", "directory for SQLite databases (the SQLite backend)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL URL (the PostgreSQL backend)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn, error")
	flag.Parse()

	if (*stateDir == "") == (*pgURL == "") {
		fmt.Fprintln(os.Stderr, "ferretdb-server: one of -state (SQLite) or -postgresql-url is required")
		os.Exit(2)
	}

	var dir string
	var err error
	if *stateDir != "" {
		dir, err = filepath.Abs(*stateDir)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ferretdb-server: state dir: %v\n", err)
			os.Exit(1)
		}
	}

	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: bad -log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	config := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}, Logger: logger}
	if *pgURL != "" {
		config.Handler = "postgresql"
		config.PostgreSQLURL = *pgURL
	} else {
		config.Handler = "sqlite"
		config.SQLiteURL = "file:" + dir + "/" // SQLite backend wants a directory URI ending with '/'
	}
	f, err := ferretdb.New(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// MongoDBURI blocks until the listener is bound.
	fmt.Fprintf(os.Stderr, "ferretdb-server: listening, uri=%s backend=%s\n", f.MongoDBURI(), config.Handler)

	if err = <-done; err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: %v\n", err)
		os.Exit(1)
	}
}
