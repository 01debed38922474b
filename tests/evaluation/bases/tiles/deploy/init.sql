create extension if not exists postgis;
create table places (id serial primary key, name text not null, geom geometry(Point, 4326) not null);
