package main

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

func run(name string, args []string) {
	cmd := exec.Command(name, args...) // expect: G204
	_ = cmd.Run()
	ctx := context.Background()
	exec.CommandContext(ctx, "git", "log", os.Args[1]) // expect: G204
	exec.Command("sh", "-c", "ls "+os.Args[1])        // expect: G204
	exec.Command("bash", "-c", os.Getenv("SCRIPT"))    // expect: G204
	exec.Command("ls", "-la")
	syscall.Exec(os.Args[1], os.Args[1:], nil) // expect: G204
}
