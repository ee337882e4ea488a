"""Schema parsing: the corpus SHOW CREATE TABLE files and MySQL-dialect dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.writeset import SchemaError, load_schema, parse_schema

MYSQLDUMP = """\
-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)
--
-- Host: localhost    Database: shop
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
DROP TABLE IF EXISTS `customer`;
CREATE TABLE `customer` (
  `id` bigint unsigned NOT NULL AUTO_INCREMENT,
  `email` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `name` varchar(100) NOT NULL,
  `bio` text,
  `login` varbinary(64) DEFAULT NULL,
  `name_lc` varchar(100) GENERATED ALWAYS AS (lower(`name`)) VIRTUAL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_email` (`email`),
  UNIQUE KEY `uk_name_bio` (`name`(20),`bio`(30)) USING BTREE,
  UNIQUE KEY `uk_login` (`login`) /*!80000 INVISIBLE */,
  KEY `ix_func` ((lower(`name`)))
) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
DELIMITER ;;
CREATE TRIGGER t1 BEFORE INSERT ON customer FOR EACH ROW BEGIN SET NEW.name = 'x'; END ;;
DELIMITER ;
CREATE TABLE `orders` (
  `id` int NOT NULL,
  `cust` bigint unsigned NOT NULL,
  `cust_email` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `fk_o_c` FOREIGN KEY (`cust`) REFERENCES `customer` (`id`) ON DELETE CASCADE,
  CONSTRAINT `fk_o_e` FOREIGN KEY (`cust_email`) REFERENCES `shop`.`customer` (`email`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1
/*!50100 PARTITION BY HASH (`id`)
PARTITIONS 4 */;
USE `other`;
CREATE TABLE t1 (a BINARY(1) PRIMARY KEY, b int UNIQUE, c int NOT NULL, UNIQUE (c), UNIQUE (b, c));
CREATE TABLE t2 (u int NOT NULL, v int, UNIQUE KEY (v), UNIQUE KEY uu (u));
"""


def test_mysqldump_dialect() -> None:
    s = parse_schema(MYSQLDUMP, source="dump.sql")
    cust = s.table("shop", "customer")
    assert cust is not None and cust.source == "dump.sql:7"
    assert [(ix.name, [(p.column, p.prefix) for p in ix.parts]) for ix in cust.unique_keys] == [
        # sql_table.cc sort_keys: among the nullable unique keys, those without
        # a prefix part come first
        ("PRIMARY", [("id", 0)]), ("uk_email", [("email", 0)]),
        ("uk_login", [("login", 0)]), ("uk_name_bio", [("name", 20), ("bio", 30)])]
    assert cust.column("ID").unsigned and not cust.column("id").nullable
    assert cust.column("email").collation == "utf8mb4_bin"
    assert cust.column("name").collation == "utf8mb4_0900_ai_ci"
    assert cust.column("login").collation == "binary"
    assert cust.column("name_lc").generated
    assert cust.referenced_by == ("shop.orders",)
    orders = s.table("shop", "orders")
    assert [(f.name, f.columns, f.ref_name, f.ref_index) for f in orders.foreign_keys] == [
        ("fk_o_c", ("cust",), "shop.customer", "PRIMARY"),
        ("fk_o_e", ("cust_email",), "shop.customer", "uk_email")]
    assert s.is_fk_parent("shop", "customer") and not s.is_fk_parent("shop", "orders")


def test_mysql_key_naming_and_order() -> None:
    s = parse_schema(MYSQLDUMP)
    t1 = s.table("other", "t1")
    # PRIMARY, then unique keys whose columns are all NOT NULL, then the others;
    # unnamed keys are named after their first column (c, b, b_2)
    assert [ix.name for ix in t1.unique_keys] == ["PRIMARY", "c", "b", "b_2"]
    t2 = s.table("other", "t2")
    assert t2.primary_key is not None and t2.primary_key.name == "uu"     # promoted
    assert [ix.name for ix in t2.unique_keys] == ["uu", "v"]


def test_default_database_sources(tmp_path: Path) -> None:
    assert parse_schema("CREATE TABLE a (id int primary key);", default_db="x").table("x", "a")
    hinted = "-- SHOW CREATE TABLE output (database wl)\nCREATE TABLE a (id int primary key);"
    assert parse_schema(hinted).table("wl", "a").db == "wl"
    assert parse_schema(hinted, default_db="z").table("z", "a").db == "z"
    anywhere = parse_schema("CREATE TABLE a (id int primary key);")
    assert anywhere.table("whatever", "a") is not None


def test_parse_error_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.sql"
    p.write_text("USE d;\n\nCREATE TABLE t (id int primary key, KEY (;\n")
    with pytest.raises(SchemaError, match=r"bad\.sql:3: cannot parse CREATE TABLE"):
        load_schema(p)
    with pytest.raises(SchemaError, match="cannot read schema file"):
        load_schema(tmp_path / "missing.sql")


@pytest.mark.corpus_files("path", "mariadb/*/schema.sql")
def test_corpus_schema_files(path: Path) -> None:
    s = load_schema(path)
    uk = s.table("wl", "t_uk")
    assert [ix.name for ix in uk.unique_keys] == ["PRIMARY", "uk_email", "uk_code"]
    assert uk.column("code").nullable and not uk.column("email").nullable
    assert [p.column for p in s.table("wl", "t_comp").primary_key.parts] == ["k", "tenant", "seq"]
    assert s.table("wl", "t_nokey").primary_key is None
    (fk,) = s.table("wl", "child").foreign_keys
    assert (fk.name, fk.ref_name, fk.ref_index) == ("fk_child_parent", "wl.parent", "PRIMARY")
    assert s.table("wl", "parent").referenced_by == ("wl.child",)
    assert s.table("wl", "t_pk").column("c_json").collation == "utf8mb4_bin"
