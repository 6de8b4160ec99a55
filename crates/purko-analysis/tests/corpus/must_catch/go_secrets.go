package main

const password = "f62e5bcda4fae4f82370da0c6f20697b8f8447ef" // expect: G101

var dbPassword = "Sup3rS3cret!" // expect: G101

type Config struct {
	Username string
	Password string
}

func config() Config {
	apiKey := "d41d8cd98f00b204e9800998ecf8427e" // expect: G101
	_ = apiKey
	awsKey := "AKIAIOSFODNN7EXAMPLE" // expect: PK101
	_ = awsKey
	dsn := "mysql://root:hunter2@tcp(db:3306)/app" // expect: PK101
	_ = dsn
	stripe := "sk_live_51Habcdefghijklmnopqrstuv" // expect: PK101
	_ = stripe
	if password == "letmein" { // expect: G101
		return Config{}
	}
	return Config{Username: "admin", Password: "admin123"} // expect: G101
}

const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n-----END OPENSSH PRIVATE KEY-----" // expect: PK101
