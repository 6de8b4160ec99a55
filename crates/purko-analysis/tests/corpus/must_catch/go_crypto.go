package main

import (
	"crypto/des"  // expect: G502
	"crypto/md5"  // expect: G501
	"crypto/rand"
	"crypto/rc4"  // expect: G503
	"crypto/rsa"
	"crypto/sha1" // expect: G505
	"crypto/tls"
	"fmt"
	mrand "math/rand"

	"golang.org/x/crypto/md4" // expect: G506
	"golang.org/x/crypto/ssh"
)

func main() {
	fmt.Printf("%x\n", md5.Sum([]byte("data"))) // expect: G401
	h := sha1.New()                          // expect: G401
	_ = h
	block, _ := des.NewCipher([]byte("8bytekey")) // expect: G405
	_ = block
	stream, _ := rc4.NewCipher([]byte("key")) // expect: G405
	_ = stream
	m := md4.New() // expect: G406
	_ = m
	key, _ := rsa.GenerateKey(rand.Reader, 1024) // expect: G403
	_ = key
	cfg := &tls.Config{
		InsecureSkipVerify: true,             // expect: G402
		MinVersion:         tls.VersionTLS10, // expect: G402
	}
	cfg.InsecureSkipVerify = true // expect: G402
	_ = cfg
	config := &ssh.ClientConfig{
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // expect: G106
	}
	_ = config
	n := mrand.Intn(100) // expect: G404
	_ = n
}
