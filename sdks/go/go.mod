module github.com/keyturn/keyturn/sdks/go

go 1.19
