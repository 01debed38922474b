module example.com/tiles

go 1.22

require (
	github.com/jackc/pgx/v5 v5.5.5
	golang.org/x/text v0.14.0
)
